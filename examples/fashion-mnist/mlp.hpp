// A multi-layer perceptron (ReLU hidden layers, softmax output, cross-entropy loss) on Eigen, and
// the SGD-with-momentum optimizer that updates it. All parameters live in one contiguous float
// buffer and all gradients in another of the same layout, so a data-parallel step is one
// allreduce of the gradient buffer and the initial broadcast is one broadcast of the parameters.
// Layout, per layer l: W_l (inputs x outputs, row-major), then b_l (outputs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace fmnist {

class Mlp {
 public:
  // Layer widths, input first, classes last, e.g. {784, 256, 128, 10}. Throws
  // std::invalid_argument for fewer than two widths or a width below 1.
  explicit Mlp(std::vector<int> widths);

  const std::vector<int>& widths() const { return widths_; }
  std::span<float> params() { return params_; }
  std::span<const float> params() const { return params_; }
  std::span<float> grads() { return grads_; }
  std::span<const float> grads() const { return grads_; }

  // He-normal weights (standard deviation sqrt(2 / inputs)) drawn from fmnist::Rng(seed), zero
  // biases: the same numbers on every machine.
  void init(std::uint64_t seed);

  // Mean cross-entropy over `batch` images (batch x widths().front() floats, row-major) with
  // labels in 0 .. classes-1; grads() receives its gradient with respect to params().
  float loss_and_grads(const float* images, const std::uint8_t* labels, std::size_t batch);

  // Class scores (batch x classes, row-major) for `batch` images.
  std::vector<float> logits(const float* images, std::size_t batch);

  // How many of `n` images the model classifies as their label.
  std::size_t count_correct(const float* images, const std::uint8_t* labels, std::size_t n);

 private:
  void forward(const float* images, std::size_t batch);

  std::vector<int> widths_;
  std::vector<std::size_t> offsets_;  // where W_l starts in params_; b_l follows it
  std::vector<float> params_;
  std::vector<float> grads_;
  std::vector<std::vector<float>> activations_;  // outputs of each layer for the last batch
};

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
