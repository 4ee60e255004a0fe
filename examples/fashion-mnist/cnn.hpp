// A small convolutional network for 28x28 grey images: 5x5 convolution (pad 2) to c1 channels,
// ReLU, 2x2 max pool; 3x3 convolution (pad 1) to c2 channels, ReLU, 2x2 max pool; a linear layer
// from the 7x7xc2 features to the 10 classes; softmax cross-entropy. It has few parameters for
// its arithmetic (the example's default c1=8, c2=16: 9,226 parameters, 0.39 M multiply-adds per
// image forward), so a data-parallel step spends its time computing, not communicating.
//
// Layout of params() (and grads()): W1 (25 x c1, row-major: rows in im2col order), b1 (c1), W2
// (9*c1 x c2), b2 (c2), W3 (49*c2 x 10, rows in NHWC order), b3 (10).
#pragma once

#include "conv.hpp"
#include "model.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fmnist {

class Cnn final : public Model {
 public:
  // Throws std::invalid_argument for a channel count outside 1 .. 1024.
  Cnn(int channels1, int channels2);

  std::string describe() const override;
  void init(std::uint64_t seed) override;
  float loss_and_grads(const float* images, const std::uint8_t* labels, std::size_t batch) override;
  std::size_t count_correct(const float* images, const std::uint8_t* labels,
                            std::size_t n) override;

 private:
  // A batch goes through in chunks of this many images, so that each chunk's activations stay in
  // the core's cache from the forward to the backward pass.
  static constexpr std::size_t kChunk = 8;

  void forward(const float* images, std::size_t n);
  void backward(std::size_t n);

  int c1_;
  int c2_;
  ConvShape conv1_;
  ConvShape conv2_;
  std::size_t w1_, b1_, w2_, b2_, w3_, b3_;  // offsets into params() and grads()

  // Activations of the current chunk (NHWC), kept for the backward pass.
  std::vector<float> cols1_, z1_, p1_, cols2_, z2_, p2_, logits_;
  std::vector<std::uint32_t> arg1_, arg2_;
  // Gradients of the current chunk.
  std::vector<float> dp2_, dz2_, dcols2_, dp1_, dz1_;
};

}  // namespace fmnist
