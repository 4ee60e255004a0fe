#include "layers.hpp"

#include "eigen_maps.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fmnist {
namespace {

Eigen::Index idx(std::size_t v) { return static_cast<Eigen::Index>(v); }

}  // namespace

ConvBlock::ConvBlock(ConvShape shape, int channels)
    : shape_(shape), channels_(static_cast<std::size_t>(channels)) {
  if (channels < 1 || shape.out_height() % 2 != 0 || shape.out_width() % 2 != 0) {
    throw std::invalid_argument(
        "ConvBlock: expected at least 1 channel and an even output size "
        "to pool, got " +
        std::to_string(channels) + " channels of " + std::to_string(shape.out_height()) + "x" +
        std::to_string(shape.out_width()));
  }
}

std::size_t ConvBlock::out_floats() const { return shape_.out_pixels() / 4 * channels_; }

std::size_t ConvBlock::param_count() const { return (shape_.patch() + 1) * channels_; }

std::size_t ConvBlock::macs() const { return shape_.out_pixels() * shape_.patch() * channels_; }

std::string ConvBlock::describe() const {
  return "conv " + std::to_string(shape_.kernel) + "x" + std::to_string(shape_.kernel) + " " +
         std::to_string(channels_);
}

void ConvBlock::forward(const float* params, const float* input, std::size_t n,
                        Saved& saved) const {
  const std::size_t rows = n * shape_.out_pixels();
  const std::size_t patch = shape_.patch();
  saved.cols.resize(rows * patch);
  saved.z.resize(rows * channels_);
  im2col(input, n, shape_, saved.cols.data());
  MatrixMap z(saved.z.data(), idx(rows), idx(channels_));
  z.noalias() = ConstMatrixMap(saved.cols.data(), idx(rows), idx(patch)) *
                ConstMatrixMap(params, idx(patch), idx(channels_));
  z.rowwise() += ConstRowMap(params + patch * channels_, idx(channels_));
  z = z.cwiseMax(0.0f);
  saved.output.resize(n * out_floats());
  saved.argmax.resize(saved.output.size());
  max_pool2(saved.z.data(), n, shape_.out_height(), shape_.out_width(), static_cast<int>(channels_),
            saved.output.data(), saved.argmax.data());
}

void ConvBlock::backward(const float* params, Saved& saved, const float* output_grad, std::size_t n,
                         float* grads, float* input_grad) const {
  const std::size_t rows = n * shape_.out_pixels();
  const std::size_t patch = shape_.patch();
  // Back through the pool, then ReLU: the gradient passes where the activation was positive.
  saved.dz.assign(rows * channels_, 0.0f);
  max_pool2_backward(output_grad, saved.argmax.data(), n * out_floats(), saved.dz.data());
  for (std::size_t i = 0; i < saved.dz.size(); ++i) {
    saved.dz[i] = saved.z[i] > 0.0f ? saved.dz[i] : 0.0f;
  }
  ConstMatrixMap d(saved.dz.data(), idx(rows), idx(channels_));
  MatrixMap(grads, idx(patch), idx(channels_)).noalias() +=
      ConstMatrixMap(saved.cols.data(), idx(rows), idx(patch)).transpose() * d;
  RowMap(grads + patch * channels_, idx(channels_)) += d.colwise().sum();
  if (input_grad == nullptr) return;
  saved.dcols.resize(rows * patch);
  MatrixMap(saved.dcols.data(), idx(rows), idx(patch)).noalias() =
      d * ConstMatrixMap(params, idx(patch), idx(channels_)).transpose();
  std::fill_n(input_grad, n * in_floats(), 0.0f);
  col2im_add(saved.dcols.data(), n, shape_, input_grad);
}

Dense::Dense(int inputs, int outputs, bool relu)
    : inputs_(static_cast<std::size_t>(inputs)),
      outputs_(static_cast<std::size_t>(outputs)),
      relu_(relu) {
  if (inputs < 1 || outputs < 1) {
    throw std::invalid_argument("Dense: expected at least 1 input and 1 output, got " +
                                std::to_string(inputs) + " and " + std::to_string(outputs));
  }
}

std::string Dense::describe() const {
  return "dense " + std::to_string(inputs_) + "-" + std::to_string(outputs_);
}

void Dense::forward(const float* params, const float* input, std::size_t n, Saved& saved) const {
  saved.input = input;
  saved.output.resize(n * outputs_);
  MatrixMap z(saved.output.data(), idx(n), idx(outputs_));
  z.noalias() = ConstMatrixMap(input, idx(n), idx(inputs_)) *
                ConstMatrixMap(params, idx(inputs_), idx(outputs_));
  z.rowwise() += ConstRowMap(params + inputs_ * outputs_, idx(outputs_));
  if (relu_) z = z.cwiseMax(0.0f);
}

void Dense::backward(const float* params, Saved& saved, const float* output_grad, std::size_t n,
                     float* grads, float* input_grad) const {
  const float* dz = output_grad;
  if (relu_) {
    // ReLU: the gradient passes where the activation was positive.
    saved.dz.resize(n * outputs_);
    for (std::size_t i = 0; i < saved.dz.size(); ++i) {
      saved.dz[i] = saved.output[i] > 0.0f ? output_grad[i] : 0.0f;
    }
    dz = saved.dz.data();
  }
  ConstMatrixMap d(dz, idx(n), idx(outputs_));
  MatrixMap(grads, idx(inputs_), idx(outputs_)).noalias() +=
      ConstMatrixMap(saved.input, idx(n), idx(inputs_)).transpose() * d;
  RowMap(grads + inputs_ * outputs_, idx(outputs_)) += d.colwise().sum();
  if (input_grad == nullptr) return;
  MatrixMap(input_grad, idx(n), idx(inputs_)).noalias() =
      d * ConstMatrixMap(params, idx(inputs_), idx(outputs_)).transpose();
}

const float* forward_layers(LayerList layers, const float* params, const float* input,
                            std::size_t n, std::span<Saved> saved) {
  for (std::size_t l = 0; l < layers.size(); ++l) {
    layers[l]->forward(params, input, n, saved[l]);
    params += layers[l]->param_count();
    input = saved[l].output.data();
  }
  return input;
}

void backward_layers(LayerList layers, const float* params, float* grads, std::span<Saved> saved,
                     const float* output_grad, std::size_t n, float* input_grad) {
  std::size_t offset = 0;
  for (const auto& layer : layers) offset += layer->param_count();
  for (std::size_t l = layers.size(); l-- > 0;) {
    offset -= layers[l]->param_count();
    float* into = input_grad;
    if (l > 0) {
      saved[l].input_grad.resize(n * layers[l]->in_floats());
      into = saved[l].input_grad.data();
    }
    layers[l]->backward(params + offset, saved[l], output_grad, n, grads + offset, into);
    output_grad = into;
  }
}

}  // namespace fmnist
