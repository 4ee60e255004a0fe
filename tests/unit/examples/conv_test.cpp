#include "conv.hpp"

#include "rng.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

namespace fmnist {
namespace {

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.normal());
  return v;
}

TEST(ConvShape, OutputSizeAndPatch) {
  const ConvShape same{28, 28, 1, 5, 2};
  EXPECT_EQ(same.out_height(), 28);
  EXPECT_EQ(same.out_width(), 28);
  EXPECT_EQ(same.patch(), 25u);
  const ConvShape valid{6, 4, 3, 3, 0};
  EXPECT_EQ(valid.out_height(), 4);
  EXPECT_EQ(valid.out_width(), 2);
  EXPECT_EQ(valid.patch(), 27u);
  EXPECT_EQ(valid.out_pixels(), 8u);
  EXPECT_EQ(valid.in_floats(), 72u);
}

TEST(Im2col, PatchesOfAPaddedImage) {
  // 3x3 image 1..9, 3x3 kernel, pad 1: the centre pixel's patch is the image; the top-left
  // corner's patch has zeros where it reaches over the edges.
  const std::vector<float> image = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const ConvShape s{3, 3, 1, 3, 1};
  std::vector<float> cols(s.out_pixels() * s.patch(), -1.0f);
  im2col(image.data(), 1, s, cols.data());
  const std::vector<float> corner(cols.begin(), cols.begin() + 9);
  EXPECT_EQ(corner, (std::vector<float>{0, 0, 0, 0, 1, 2, 0, 4, 5}));
  const std::vector<float> centre(cols.begin() + 4 * 9, cols.begin() + 5 * 9);
  EXPECT_EQ(centre, image);
  const std::vector<float> right(cols.begin() + 5 * 9, cols.begin() + 6 * 9);
  EXPECT_EQ(right, (std::vector<float>{2, 3, 0, 5, 6, 0, 8, 9, 0}));
  const std::vector<float> last(cols.end() - 9, cols.end());
  EXPECT_EQ(last, (std::vector<float>{5, 6, 0, 8, 9, 0, 0, 0, 0}));
}

TEST(Im2col, ChannelsStayTogetherInNhwcOrder) {
  // Two 2x2 images with 2 channels each, 2x2 kernel, no padding: one output pixel per image whose
  // patch is the whole image, (kernel row, kernel column, channel) order.
  std::vector<float> images(16);
  std::iota(images.begin(), images.end(), 0.0f);
  const ConvShape s{2, 2, 2, 2, 0};
  std::vector<float> cols(2 * s.out_pixels() * s.patch());
  im2col(images.data(), 2, s, cols.data());
  EXPECT_EQ(cols, images);
}

TEST(Col2imAdd, IsTheAdjointOfIm2col) {
  // <im2col(x), y> == <x, col2im(y)> for every x and y: what makes col2im_add the gradient.
  for (const ConvShape& s :
       {ConvShape{5, 4, 3, 3, 1}, ConvShape{7, 7, 1, 5, 2}, ConvShape{6, 5, 2, 2, 0}}) {
    const std::size_t count = 2;
    const std::vector<float> x = random_floats(count * s.in_floats(), 1);
    const std::vector<float> y = random_floats(count * s.out_pixels() * s.patch(), 2);
    std::vector<float> cols(y.size());
    im2col(x.data(), count, s, cols.data());
    std::vector<float> back(x.size(), 0.0f);
    col2im_add(y.data(), count, s, back.data());
    double lhs = 0, rhs = 0;
    for (std::size_t i = 0; i < y.size(); ++i) lhs += double{cols[i]} * y[i];
    for (std::size_t i = 0; i < x.size(); ++i) rhs += double{x[i]} * back[i];
    EXPECT_NEAR(lhs, rhs, 1e-4 * std::abs(lhs)) << s.height << "x" << s.width << "x" << s.channels;
  }
}

TEST(Col2imAdd, AddsOntoWhatIsThere) {
  const ConvShape s{2, 2, 1, 1, 0};
  const std::vector<float> cols = {1, 2, 3, 4};
  std::vector<float> image = {10, 10, 10, 10};
  col2im_add(cols.data(), 1, s, image.data());
  EXPECT_EQ(image, (std::vector<float>{11, 12, 13, 14}));
}

TEST(MaxPool2, TakesTheLargestOfEachBlockAndRemembersWhere) {
  // One 4x4 image with 2 channels: channel 0 counts up, channel 1 is its negation; the first of
  // equal maxima wins.
  std::vector<float> image(32);
  for (int p = 0; p < 16; ++p) {
    image[2 * p] = static_cast<float>(p);
    image[2 * p + 1] = -static_cast<float>(p);
  }
  image[2 * 4 + 1] = 0.0f;  // pixel 4, channel 1 ties with pixel 0's 0
  std::vector<float> out(8);
  std::vector<std::uint32_t> where(8);
  max_pool2(image.data(), 1, 4, 4, 2, out.data(), where.data());
  EXPECT_EQ(out, (std::vector<float>{5, 0, 7, -2, 13, -8, 15, -10}));
  EXPECT_EQ(where, (std::vector<std::uint32_t>{10, 1, 14, 5, 26, 17, 30, 21}));
}

TEST(MaxPool2, BackwardSendsEachGradientWhereItsMaximumWas) {
  const std::vector<std::uint32_t> where = {3, 0, 3};
  const std::vector<float> grad = {1.0f, 2.0f, 0.5f};
  std::vector<float> image(4, 0.0f);
  max_pool2_backward(grad.data(), where.data(), grad.size(), image.data());
  EXPECT_EQ(image, (std::vector<float>{2.0f, 0.0f, 0.0f, 1.5f}));
}

}  // namespace
}  // namespace fmnist
