#include "conv.hpp"

#include <algorithm>

namespace fmnist {
namespace {

// Calls fn(patch_offset, input_offset, floats) for every run of patch columns that comes from one
// input row (kernel row ky of output pixel (y, x)): the kernel columns inside the image are
// adjacent pixels, so in NHWC they are one contiguous run. Columns in the padding are skipped;
// they are reported through pad(patch_offset, floats).
template <typename Run, typename Pad>
void for_each_row_run(const ConvShape& s, Run&& run, Pad&& pad) {
  const int oh = s.out_height();
  const int ow = s.out_width();
  const std::size_t c = static_cast<std::size_t>(s.channels);
  const std::size_t k = static_cast<std::size_t>(s.kernel);
  std::size_t col = 0;
  for (int y = 0; y < oh; ++y) {
    for (int x = 0; x < ow; ++x) {
      // Kernel columns [lo, hi) fall inside the image.
      const int lo = std::max(0, s.pad - x);
      const int hi = std::min(s.kernel, s.width + s.pad - x);
      for (int ky = 0; ky < s.kernel; ++ky, col += k * c) {
        const int iy = y + ky - s.pad;
        if (iy < 0 || iy >= s.height || lo >= hi) {
          pad(col, k * c);
          continue;
        }
        const auto ulo = static_cast<std::size_t>(lo);
        const auto uhi = static_cast<std::size_t>(hi);
        if (ulo > 0) pad(col, ulo * c);
        const std::size_t in = (static_cast<std::size_t>(iy) * static_cast<std::size_t>(s.width) +
                                static_cast<std::size_t>(x + lo - s.pad)) *
                               c;
        run(col + ulo * c, in, (uhi - ulo) * c);
        if (uhi < k) pad(col + uhi * c, (k - uhi) * c);
      }
    }
  }
}

}  // namespace

void im2col(const float* images, std::size_t count, const ConvShape& shape, float* cols) {
  const std::size_t per_image = shape.out_pixels() * shape.patch();
  for (std::size_t i = 0; i < count; ++i) {
    const float* image = images + i * shape.in_floats();
    float* out = cols + i * per_image;
    for_each_row_run(
        shape,
        [&](std::size_t col, std::size_t in, std::size_t n) {
          for (std::size_t j = 0; j < n; ++j) out[col + j] = image[in + j];
        },
        [&](std::size_t col, std::size_t n) {
          for (std::size_t j = 0; j < n; ++j) out[col + j] = 0.0f;
        });
  }
}

void col2im_add(const float* cols, std::size_t count, const ConvShape& shape, float* images) {
  const std::size_t per_image = shape.out_pixels() * shape.patch();
  for (std::size_t i = 0; i < count; ++i) {
    float* image = images + i * shape.in_floats();
    const float* in = cols + i * per_image;
    for_each_row_run(
        shape,
        [&](std::size_t col, std::size_t at, std::size_t n) {
          for (std::size_t j = 0; j < n; ++j) image[at + j] += in[col + j];
        },
        [](std::size_t, std::size_t) {});
  }
}

void max_pool2(const float* images, std::size_t count, int height, int width, int channels,
               float* out, std::uint32_t* argmax) {
  const std::size_t w = static_cast<std::size_t>(width);
  const std::size_t c = static_cast<std::size_t>(channels);
  const std::size_t in_floats = static_cast<std::size_t>(height) * w * c;
  std::size_t o = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t base = i * in_floats;
    for (std::size_t y = 0; y < static_cast<std::size_t>(height); y += 2) {
      for (std::size_t x = 0; x < w; x += 2) {
        const std::size_t corners[4] = {base + (y * w + x) * c, base + (y * w + x + 1) * c,
                                        base + ((y + 1) * w + x) * c,
                                        base + ((y + 1) * w + x + 1) * c};
        for (std::size_t k = 0; k < c; ++k, ++o) {
          std::size_t best = corners[0] + k;
          for (int j = 1; j < 4; ++j) {
            if (images[corners[j] + k] > images[best]) best = corners[j] + k;
          }
          out[o] = images[best];
          argmax[o] = static_cast<std::uint32_t>(best);
        }
      }
    }
  }
}

void max_pool2_backward(const float* out_grad, const std::uint32_t* argmax, std::size_t n,
                        float* images_grad) {
  for (std::size_t o = 0; o < n; ++o) images_grad[argmax[o]] += out_grad[o];
}

}  // namespace fmnist
