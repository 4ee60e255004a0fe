#include "cnn.hpp"

#include "optimizer.hpp"
#include "rng.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace fmnist {
namespace {

constexpr std::size_t kPixels = 28 * 28;

struct Batch {
  std::vector<float> images;
  std::vector<std::uint8_t> labels;
};

Batch random_batch(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  Batch b;
  for (std::size_t i = 0; i < n * kPixels; ++i)
    b.images.push_back(static_cast<float>(rng.normal()));
  for (std::size_t i = 0; i < n; ++i) b.labels.push_back(static_cast<std::uint8_t>(rng.below(10)));
  return b;
}

std::vector<float> copy(std::span<const float> s) { return {s.begin(), s.end()}; }

TEST(Cnn, ParameterLayoutHoldsEveryWeightAndBias) {
  Cnn m(16, 32);
  EXPECT_EQ(m.params().size(), 25u * 16 + 16 + 9 * 16 * 32 + 32 + 49 * 32 * 10 + 10);
  EXPECT_EQ(m.params().size(), 20746u);
  EXPECT_EQ(m.grads().size(), m.params().size());
  EXPECT_EQ(Cnn(8, 16).params().size(), 9226u);
  EXPECT_EQ(m.describe(), "cnn 16,32");
}

TEST(Cnn, RejectsChannelCountsOutOfRange) {
  EXPECT_THROW(Cnn(0, 8), std::invalid_argument);
  EXPECT_THROW(Cnn(8, 1025), std::invalid_argument);
}

TEST(Cnn, InitIsDeterministicHeNormalWithZeroBiases) {
  Cnn a(8, 16), b(8, 16), c(8, 16);
  a.init(5);
  b.init(5);
  c.init(6);
  EXPECT_EQ(copy(a.params()), copy(b.params()));
  EXPECT_NE(copy(a.params()), copy(c.params()));
  // The second convolution's weights: fan-in 9 x 8 = 72.
  const std::size_t w2 = 25 * 8 + 8, n = 72 * 16;
  double sq = 0;
  for (std::size_t i = w2; i < w2 + n; ++i) sq += double{a.params()[i]} * a.params()[i];
  EXPECT_NEAR(std::sqrt(sq / n), std::sqrt(2.0 / 72), 0.01);
  for (std::size_t i = 25 * 8; i < 25 * 8 + 8; ++i) EXPECT_EQ(a.params()[i], 0.0f) << i;
  for (std::size_t i = w2 + n; i < w2 + n + 16; ++i) EXPECT_EQ(a.params()[i], 0.0f) << i;
  for (std::size_t i = a.params().size() - 10; i < a.params().size(); ++i) {
    EXPECT_EQ(a.params()[i], 0.0f) << i;
  }
}

TEST(Cnn, GradientsMatchFiniteDifferences) {
  // Central differences in float cross the kinks of ReLU and max pooling for a few parameters
  // (mostly the first convolution's, which move every pixel): those may differ by more than the
  // tolerance, never by much. A wiring mistake (a transposed product, a wrong offset, a lost
  // chunk) makes most of them differ.
  Cnn m(2, 3);
  m.init(11);
  Rng rng(3);
  for (float& p : m.params()) p += static_cast<float>(0.1 * rng.normal());
  const Batch b = random_batch(10, 9);
  m.loss_and_grads(b.images.data(), b.labels.data(), 10);
  const std::vector<float> analytic = copy(m.grads());
  ASSERT_EQ(analytic.size(), 25u * 2 + 2 + 9 * 2 * 3 + 3 + 49 * 3 * 10 + 10);
  const float eps = 1e-3f;
  std::size_t outside = 0;
  for (std::size_t i = 0; i < m.params().size(); ++i) {
    const float saved = m.params()[i];
    m.params()[i] = saved + eps;
    const double up = m.loss_and_grads(b.images.data(), b.labels.data(), 10);
    m.params()[i] = saved - eps;
    const double down = m.loss_and_grads(b.images.data(), b.labels.data(), 10);
    m.params()[i] = saved;
    const double numeric = (up - down) / (2 * eps);
    const double error = std::abs(numeric - analytic[i]);
    outside += error > 2e-3 + 0.01 * std::abs(analytic[i]);
    EXPECT_LT(error, 0.05) << "parameter " << i << ": analytic " << analytic[i] << ", numeric "
                           << numeric;
  }
  EXPECT_LE(outside, analytic.size() / 50)
      << outside << " of " << analytic.size() << " parameters outside 2e-3 + 1 %";
}

TEST(Cnn, ABatchsGradientIsTheWeightedSumOfItsPartsGradients) {
  // 13 images go through in two chunks (8 and 5): their gradient must be what the two parts
  // give separately, weighted by their sizes.
  Cnn m(3, 4);
  m.init(2);
  const Batch b = random_batch(13, 5);
  const float whole = m.loss_and_grads(b.images.data(), b.labels.data(), 13);
  const std::vector<float> g = copy(m.grads());
  const float first = m.loss_and_grads(b.images.data(), b.labels.data(), 6);
  const std::vector<float> g1 = copy(m.grads());
  const float rest = m.loss_and_grads(b.images.data() + 6 * kPixels, b.labels.data() + 6, 7);
  const std::vector<float> g2 = copy(m.grads());
  EXPECT_NEAR(whole, (6 * first + 7 * rest) / 13, 1e-5);
  for (std::size_t i = 0; i < g.size(); ++i) {
    const float parts = (6 * g1[i] + 7 * g2[i]) / 13;
    EXPECT_NEAR(g[i], parts, 1e-5f + 1e-4f * std::abs(parts)) << "parameter " << i;
  }
}

TEST(Cnn, LearnsToSeparateATrainingSet) {
  // 32 images of noise with random labels can only be memorized: after training every one is
  // classified as its label, and the loss is near 0.
  Cnn m(4, 8);
  m.init(1);
  const Batch b = random_batch(32, 4);
  Sgd sgd(m.params().size(), 0.9f);
  float loss = 0.0f;
  for (int step = 0; step < 60; ++step) {
    loss = m.loss_and_grads(b.images.data(), b.labels.data(), 32);
    sgd.step(m.params(), m.grads(), 0.02f);
  }
  EXPECT_LT(loss, 0.05f);
  EXPECT_EQ(m.count_correct(b.images.data(), b.labels.data(), 32), 32u);
}

}  // namespace
}  // namespace fmnist
