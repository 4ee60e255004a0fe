// A small convolutional network for 28x28 grey images: 5x5 convolution (pad 2) to c1 channels,
// ReLU, 2x2 max pool; 3x3 convolution (pad 1) to c2 channels, ReLU, 2x2 max pool; a linear layer
// from the 7x7xc2 features to the 10 classes; softmax cross-entropy. It has few parameters for
// its arithmetic (the example's default c1=8, c2=16: 9,226 parameters, 0.39 M multiply-adds per
// image forward), so a data-parallel step spends its time computing, not communicating.
//
// Three layers (layers.hpp): ConvBlock, ConvBlock, Dense. Layout of params() (and grads()): W1
// (25 x c1, row-major: rows in im2col order), b1 (c1), W2 (9*c1 x c2), b2 (c2), W3 (49*c2 x 10,
// rows in NHWC order), b3 (10).
#pragma once

#include "model.hpp"

#include <cstdint>
#include <string>

namespace fmnist {

class Cnn final : public Model {
 public:
  // Throws std::invalid_argument for a channel count outside 1 .. 1024.
  Cnn(int channels1, int channels2);

  std::string describe() const override;
  void init(std::uint64_t seed) override;

 private:
  // A batch goes through in chunks of this many images, so that each chunk's activations stay in
  // the core's cache from the forward to the backward pass.
  static constexpr std::size_t kChunk = 8;

  int c1_;
  int c2_;
};

}  // namespace fmnist
