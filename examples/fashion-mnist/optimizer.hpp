// What updates a model's parameters: SGD with momentum, and the learning-rate schedule of a
// data-parallel run (linear scaling with the global batch, warm-up, cosine decay).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace fmnist {

// v <- momentum * v + g; p <- p - lr * v (PyTorch's SGD without dampening).
class Sgd {
 public:
  Sgd(std::size_t size, float momentum) : velocity_(size, 0.0f), momentum_(momentum) {}
  void step(std::span<float> params, std::span<const float> grads, float lr);
  std::span<float> velocity() { return velocity_; }
  std::span<const float> velocity() const { return velocity_; }

 private:
  std::vector<float> velocity_;
  float momentum_;
};

// The learning rate at `step` (counted from 0 over the whole run of `total_steps`): the base rate
// is for a batch of 64 and scales linearly with the global batch (Goyal et al. 2017); it rises
// linearly from base_lr to that peak over `warmup_steps`, then follows a cosine down to 0 at
// total_steps.
float learning_rate(std::int64_t step, float base_lr, std::int64_t global_batch,
                    std::int64_t warmup_steps, std::int64_t total_steps);

}  // namespace fmnist
