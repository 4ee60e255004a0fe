// The data movement of a convolutional layer, as pure functions over NHWC images (each image a
// height x width grid of pixels, each pixel `channels` contiguous floats): im2col turns a stride-1
// convolution into one matrix product, col2im_add is its adjoint (the input's gradient), and a 2x2
// max pool with the positions of its maxima for the backward pass. The products themselves are
// Eigen's (cnn.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace fmnist {

// A stride-1 square convolution padded with zeros on every side by `pad` pixels.
struct ConvShape {
  int height = 0;
  int width = 0;
  int channels = 0;  // input channels
  int kernel = 0;
  int pad = 0;

  int out_height() const { return height + 2 * pad - kernel + 1; }
  int out_width() const { return width + 2 * pad - kernel + 1; }
  // Columns of the im2col matrix: one input patch, kernel x kernel pixels of all channels.
  std::size_t patch() const {
    return static_cast<std::size_t>(kernel) * static_cast<std::size_t>(kernel) *
           static_cast<std::size_t>(channels);
  }
  // Rows of the im2col matrix per image: one per output pixel.
  std::size_t out_pixels() const {
    return static_cast<std::size_t>(out_height()) * static_cast<std::size_t>(out_width());
  }
  std::size_t in_floats() const {
    return static_cast<std::size_t>(height) * static_cast<std::size_t>(width) *
           static_cast<std::size_t>(channels);
  }
};

// cols (images * out_pixels() rows x patch() columns, row-major) receives every output pixel's
// input patch, ordered (kernel row, kernel column, channel); padding reads as 0.
void im2col(const float* images, std::size_t count, const ConvShape& shape, float* cols);

// Adds each patch of `cols` back onto the pixels it was read from: the gradient with respect to
// the input of a convolution whose im2col matrix had the gradient `cols`. `images` must hold
// count * in_floats() floats (usually zeros).
void col2im_add(const float* cols, std::size_t count, const ConvShape& shape, float* images);

// 2x2 max pooling with stride 2 of `count` NHWC images of even height and width: out receives
// count x height/2 x width/2 x channels floats and argmax, for each of them, the index into
// `images` of the value it took (the first of equal maxima).
void max_pool2(const float* images, std::size_t count, int height, int width, int channels,
               float* out, std::uint32_t* argmax);

// The gradient of max_pool2: each of the `n` output gradients is added to the input position its
// value came from. `images_grad` must be zeroed by the caller.
void max_pool2_backward(const float* out_grad, const std::uint32_t* argmax, std::size_t n,
                        float* images_grad);

}  // namespace fmnist
