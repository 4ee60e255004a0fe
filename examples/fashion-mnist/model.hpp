// A model of the example: layers applied one after the other (layers.hpp) to 28x28 images, the
// last giving the 10 class scores, with softmax cross-entropy as the loss. Its parameters and
// gradients each lie in one contiguous float buffer of the same layout, layer after layer (so a
// data-parallel step is one allreduce of the gradients, the initial broadcast is one broadcast of
// the parameters, and a pipeline stage's share of them is one slice). Cnn and Mlp say which
// layers and how they start; the rest is here.
#pragma once

#include "layers.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace fmnist {

class Model {
 public:
  virtual ~Model() = default;

  // How the run's header names the model, e.g. "cnn 16,32" or "mlp 256,128".
  virtual std::string describe() const = 0;

  // He-normal weights drawn from fmnist::Rng(seed), zero biases: the same numbers on every
  // machine.
  virtual void init(std::uint64_t seed) = 0;

  std::span<float> params() { return params_; }
  std::span<const float> params() const { return params_; }
  std::span<float> grads() { return grads_; }
  std::span<const float> grads() const { return grads_; }

  LayerList layers() const { return layers_; }
  // Where layer l's parameters (and gradients) start in params() (grads()).
  std::size_t param_offset(std::size_t layer) const { return offsets_[layer]; }
  // How many images go through the layers at a time, forward and back, in loss_and_grads() (0:
  // the whole batch) and in count_correct(). A pipeline stage takes its micro-batches through
  // in chunks of the same size, so that it computes what loss_and_grads() does.
  std::size_t train_chunk() const { return train_chunk_; }
  std::size_t eval_chunk() const { return eval_chunk_; }

  // Mean cross-entropy over `batch` 28x28 images (batch x 784 floats, row-major) with labels in
  // 0 .. 9; grads() receives its gradient with respect to params().
  float loss_and_grads(const float* images, const std::uint8_t* labels, std::size_t batch);

  // How many of `n` images the model classifies as their label.
  std::size_t count_correct(const float* images, const std::uint8_t* labels, std::size_t n);

 protected:
  Model(std::size_t train_chunk, std::size_t eval_chunk)
      : train_chunk_(train_chunk), eval_chunk_(eval_chunk) {}

  // Appends a layer; its parameters (zeros) follow the previous layer's.
  void add_layer(std::unique_ptr<Layer> layer);

 private:
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<std::size_t> offsets_;
  std::vector<float> params_;
  std::vector<float> grads_;
  std::size_t train_chunk_;
  std::size_t eval_chunk_;
  std::vector<Saved> saved_;  // one record per layer, for the chunk going through
  std::vector<float> scores_grad_;
};

}  // namespace fmnist
