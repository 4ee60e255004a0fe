// What the training loop needs from a model: its parameters and gradients, each in one contiguous
// float buffer of the same layout (so a data-parallel step is one allreduce of the gradients and
// the initial broadcast is one broadcast of the parameters), a seeded initialization, the loss
// and its gradient over a batch, and the number of correct predictions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fmnist {

class Model {
 public:
  virtual ~Model() = default;

  // How the run's header names the model, e.g. "cnn 16,32" or "mlp 256,128".
  virtual std::string describe() const = 0;

  std::span<float> params() { return params_; }
  std::span<const float> params() const { return params_; }
  std::span<float> grads() { return grads_; }
  std::span<const float> grads() const { return grads_; }

  // He-normal weights drawn from fmnist::Rng(seed), zero biases: the same numbers on every
  // machine.
  virtual void init(std::uint64_t seed) = 0;

  // Mean cross-entropy over `batch` 28x28 images (batch x 784 floats, row-major) with labels in
  // 0 .. 9; grads() receives its gradient with respect to params().
  virtual float loss_and_grads(const float* images, const std::uint8_t* labels,
                               std::size_t batch) = 0;

  // How many of `n` images the model classifies as their label.
  virtual std::size_t count_correct(const float* images, const std::uint8_t* labels,
                                    std::size_t n) = 0;

 protected:
  void allocate(std::size_t count) {
    params_.assign(count, 0.0f);
    grads_.assign(count, 0.0f);
  }

 private:
  std::vector<float> params_;
  std::vector<float> grads_;
};

}  // namespace fmnist
