// The layers the example's models are made of. A layer is a function of its parameters and its
// input and keeps nothing between calls: what its backward pass needs from its forward pass goes
// into a Saved record that the caller owns, one per layer per chunk of images. So a model runs a
// chunk through all its layers and back with one set of records (Model), and a pipeline stage
// runs its share of the layers on several micro-batches, each with records of its own, whose
// backward passes come later (examples/fashion-mnist-pipeline).
#pragma once

#include "conv.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace fmnist {

// What one layer's forward pass over one chunk of images keeps for its backward pass, and the
// scratch of that backward pass. Kept between calls so that its buffers are allocated once.
struct Saved {
  // The chunk's input (Dense): the caller keeps it alive and unchanged until the backward pass.
  const float* input = nullptr;
  std::vector<float> cols;            // ConvBlock: the input's im2col patches
  std::vector<float> z;               // ConvBlock: the convolution's output after ReLU
  std::vector<std::uint32_t> argmax;  // ConvBlock: where each pooled value came from
  std::vector<float> output;          // the layer's output: the next layer's input
  std::vector<float> dz;              // backward scratch: the gradient before the weights
  std::vector<float> dcols;           // backward scratch (ConvBlock): the patches' gradient
  std::vector<float> input_grad;      // the input's gradient, when the caller keeps it here
};

class Layer {
 public:
  virtual ~Layer() = default;

  // Floats per image of the input and of the output.
  virtual std::size_t in_floats() const = 0;
  virtual std::size_t out_floats() const = 0;
  // The layer's parameters, weights then biases, in params() of the model.
  virtual std::size_t param_count() const = 0;
  // Multiply-adds per image of the forward pass: what a pipeline balances its stages by.
  virtual std::size_t macs() const = 0;
  // What a run's header calls it, e.g. "conv 5x5 8" or "dense 784-10".
  virtual std::string describe() const = 0;

  // The layer applied to n images (n x in_floats(), row-major): saved.output receives n x
  // out_floats() floats, saved the rest of what backward() needs.
  virtual void forward(const float* params, const float* input, std::size_t n,
                       Saved& saved) const = 0;
  // From d(loss)/d(output) of the chunk that forward() saved: adds the chunk's parameter
  // gradients to grads (param_count() floats) and, unless input_grad is null, writes d(loss)/
  // d(input) there (n x in_floats()).
  virtual void backward(const float* params, Saved& saved, const float* output_grad, std::size_t n,
                        float* grads, float* input_grad) const = 0;
};

// A convolution (stride 1, zero padding), its bias, ReLU and a 2x2 max pool. Parameters: W
// (patch() x channels, row-major: rows in im2col order), b (channels).
class ConvBlock final : public Layer {
 public:
  ConvBlock(ConvShape shape, int channels);

  std::size_t in_floats() const override { return shape_.in_floats(); }
  std::size_t out_floats() const override;
  std::size_t param_count() const override;
  std::size_t macs() const override;
  std::string describe() const override;
  void forward(const float* params, const float* input, std::size_t n, Saved& saved) const override;
  void backward(const float* params, Saved& saved, const float* output_grad, std::size_t n,
                float* grads, float* input_grad) const override;

  const ConvShape& shape() const { return shape_; }
  std::size_t channels() const { return channels_; }

 private:
  ConvShape shape_;
  std::size_t channels_;
};

// A fully connected layer, optionally followed by ReLU. Parameters: W (inputs x outputs,
// row-major), b (outputs).
class Dense final : public Layer {
 public:
  Dense(int inputs, int outputs, bool relu);

  std::size_t in_floats() const override { return inputs_; }
  std::size_t out_floats() const override { return outputs_; }
  std::size_t param_count() const override { return (inputs_ + 1) * outputs_; }
  std::size_t macs() const override { return inputs_ * outputs_; }
  std::string describe() const override;
  void forward(const float* params, const float* input, std::size_t n, Saved& saved) const override;
  void backward(const float* params, Saved& saved, const float* output_grad, std::size_t n,
                float* grads, float* input_grad) const override;

 private:
  std::size_t inputs_;
  std::size_t outputs_;
  bool relu_;
};

using LayerList = std::span<const std::unique_ptr<Layer>>;

// Consecutive layers of one model, run one after the other on n images; their parameters (and
// gradients) lie one after the other from `params` (`grads`), and `saved` holds one record per
// layer. forward_layers returns the last layer's output (in saved.back().output).
// backward_layers takes d(loss)/d(that output) and, unless input_grad is null, writes the first
// layer's input gradient there; the gradients between the layers stay in the records.
const float* forward_layers(LayerList layers, const float* params, const float* input,
                            std::size_t n, std::span<Saved> saved);
void backward_layers(LayerList layers, const float* params, float* grads, std::span<Saved> saved,
                     const float* output_grad, std::size_t n, float* input_grad);

}  // namespace fmnist
