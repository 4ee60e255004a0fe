#include "cnn.hpp"

#include "rng.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

namespace fmnist {
namespace {

constexpr int kSide = 28;
constexpr int kOutputs = 10;

int checked_channels(int c, const char* name) {
  if (c < 1 || c > 1024) {
    throw std::invalid_argument(std::string("Cnn: ") + name + ": expected 1-1024 channels, got " +
                                std::to_string(c));
  }
  return c;
}

}  // namespace

Cnn::Cnn(int channels1, int channels2)
    : Model(kChunk, kChunk),
      c1_(checked_channels(channels1, "first layer")),
      c2_(checked_channels(channels2, "second layer")) {
  add_layer(std::make_unique<ConvBlock>(ConvShape{kSide, kSide, 1, 5, 2}, c1_));
  add_layer(std::make_unique<ConvBlock>(ConvShape{kSide / 2, kSide / 2, c1_, 3, 1}, c2_));
  add_layer(std::make_unique<Dense>(49 * c2_, kOutputs, /*relu=*/false));
}

std::string Cnn::describe() const {
  return "cnn " + std::to_string(c1_) + "," + std::to_string(c2_);
}

void Cnn::init(std::uint64_t seed) {
  Rng rng(seed);
  float* p = params().data();
  std::fill(params().begin(), params().end(), 0.0f);
  // He for the convolutions, which a ReLU follows. The output layer starts at zero: every class
  // scores 0, the loss starts at log(10), and the first steps train it before the features move.
  // With random output weights the max-pooled features (mean well above 0) start the loss near
  // 3 and the first steps overshoot.
  for (std::size_t l = 0; l < 2; ++l) {
    const auto& conv = static_cast<const ConvBlock&>(*layers()[l]);
    const std::size_t weights = conv.shape().patch() * conv.channels();
    const double stddev = std::sqrt(2.0 / static_cast<double>(conv.shape().patch()));
    for (std::size_t i = 0; i < weights; ++i) {
      p[param_offset(l) + i] = static_cast<float>(stddev * rng.normal());
    }
  }
}

}  // namespace fmnist
