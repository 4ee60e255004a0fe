// A multi-layer perceptron (ReLU hidden layers, softmax output, cross-entropy loss) on Eigen.
// Layout of params() (and grads()), per layer l: W_l (inputs x outputs, row-major), then b_l
// (outputs).
#pragma once

#include "model.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fmnist {

class Mlp final : public Model {
 public:
  // Layer widths, input first, classes last, e.g. {784, 256, 128, 10}. Throws
  // std::invalid_argument for fewer than two widths or a width below 1.
  explicit Mlp(std::vector<int> widths);

  const std::vector<int>& widths() const { return widths_; }

  // "mlp" and the hidden widths, e.g. "mlp 256,128".
  std::string describe() const override;
  // He-normal weights (standard deviation sqrt(2 / inputs)), zero biases.
  void init(std::uint64_t seed) override;
  float loss_and_grads(const float* images, const std::uint8_t* labels, std::size_t batch) override;
  std::size_t count_correct(const float* images, const std::uint8_t* labels,
                            std::size_t n) override;

  // Class scores (batch x classes, row-major) for `batch` images.
  std::vector<float> logits(const float* images, std::size_t batch);

 private:
  void forward(const float* images, std::size_t batch);

  std::vector<int> widths_;
  std::vector<std::size_t> offsets_;             // where W_l starts in params(); b_l follows it
  std::vector<std::vector<float>> activations_;  // outputs of each layer for the last batch
};

}  // namespace fmnist
