// A multi-layer perceptron (ReLU hidden layers, softmax output, cross-entropy loss): one Dense
// layer (layers.hpp) per pair of widths. Layout of params() (and grads()), per layer l: W_l
// (inputs x outputs, row-major), then b_l (outputs).
#pragma once

#include "model.hpp"

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

 private:
  std::vector<int> widths_;
};

}  // namespace fmnist
