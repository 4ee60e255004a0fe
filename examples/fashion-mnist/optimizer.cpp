#include "optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace fmnist {

void Sgd::step(std::span<float> params, std::span<const float> grads, float lr) {
  for (std::size_t i = 0; i < params.size(); ++i) {
    velocity_[i] = momentum_ * velocity_[i] + grads[i];
    params[i] -= lr * velocity_[i];
  }
}

float learning_rate(std::int64_t step, float base_lr, std::int64_t global_batch,
                    std::int64_t warmup_steps, std::int64_t total_steps) {
  const double peak = base_lr * static_cast<double>(global_batch) / 64.0;
  if (step < warmup_steps) {
    const double progress = static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
    return static_cast<float>(base_lr + (peak - base_lr) * progress);
  }
  if (step >= total_steps) return 0.0f;
  const double progress =
      static_cast<double>(step - warmup_steps) /
      static_cast<double>(std::max<std::int64_t>(1, total_steps - warmup_steps));
  return static_cast<float>(0.5 * peak * (1.0 + std::cos(std::numbers::pi * progress)));
}

}  // namespace fmnist
