#include "mlp.hpp"

#include "rng.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

namespace fmnist {
namespace {

// A training batch goes through whole (its products are large enough to run at Eigen's speed);
// the test set in slices of this many images.
constexpr std::size_t kEvalChunk = 1000;

std::vector<int> checked_widths(std::vector<int> widths) {
  if (widths.size() < 2) {
    throw std::invalid_argument("Mlp: expected at least an input and an output width, got " +
                                std::to_string(widths.size()) + " widths");
  }
  for (std::size_t l = 0; l < widths.size(); ++l) {
    if (widths[l] < 1) {
      throw std::invalid_argument("Mlp: layer width " + std::to_string(l) +
                                  ": expected at least 1, got " + std::to_string(widths[l]));
    }
  }
  return widths;
}

}  // namespace

Mlp::Mlp(std::vector<int> widths)
    : Model(0, kEvalChunk), widths_(checked_widths(std::move(widths))) {
  for (std::size_t l = 0; l + 1 < widths_.size(); ++l) {
    add_layer(std::make_unique<Dense>(widths_[l], widths_[l + 1], l + 2 < widths_.size()));
  }
}

std::string Mlp::describe() const {
  std::string text = "mlp";
  for (std::size_t l = 1; l + 1 < widths_.size(); ++l) {
    text += l == 1 ? ' ' : ',';
    text += std::to_string(widths_[l]);
  }
  return text;
}

void Mlp::init(std::uint64_t seed) {
  Rng rng(seed);
  for (std::size_t l = 0; l + 1 < widths_.size(); ++l) {
    const auto in = static_cast<std::size_t>(widths_[l]);
    const auto out = static_cast<std::size_t>(widths_[l + 1]);
    const double stddev = std::sqrt(2.0 / static_cast<double>(in));
    float* w = params().data() + param_offset(l);
    for (std::size_t i = 0; i < in * out; ++i) w[i] = static_cast<float>(stddev * rng.normal());
    std::fill(w + in * out, w + in * out + out, 0.0f);
  }
}

}  // namespace fmnist
