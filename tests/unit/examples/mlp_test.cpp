#include "mlp.hpp"
#include "optimizer.hpp"

#include "rng.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace fmnist {
namespace {

struct Batch {
  std::vector<float> images;
  std::vector<std::uint8_t> labels;
};

Batch random_batch(std::size_t n, std::size_t features, int classes, std::uint64_t seed) {
  Rng rng(seed);
  Batch b;
  for (std::size_t i = 0; i < n * features; ++i)
    b.images.push_back(static_cast<float>(rng.normal()));
  for (std::size_t i = 0; i < n; ++i)
    b.labels.push_back(static_cast<std::uint8_t>(rng.below(static_cast<std::uint32_t>(classes))));
  return b;
}

TEST(Mlp, ParameterLayoutHoldsEveryWeightAndBias) {
  Mlp m({784, 256, 128, 10});
  EXPECT_EQ(m.params().size(), 784u * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
  EXPECT_EQ(m.grads().size(), m.params().size());
  EXPECT_EQ(m.describe(), "mlp 256,128");
  EXPECT_EQ(Mlp({784, 10}).describe(), "mlp");
}

TEST(Mlp, RejectsDegenerateShapes) {
  EXPECT_THROW(Mlp({784}), std::invalid_argument);
  EXPECT_THROW(Mlp({784, 0, 10}), std::invalid_argument);
}

TEST(Mlp, InitIsDeterministicHeNormalWithZeroBiases) {
  Mlp a({400, 300, 10}), b({400, 300, 10}), c({400, 300, 10});
  a.init(5);
  b.init(5);
  c.init(6);
  EXPECT_EQ(std::vector<float>(a.params().begin(), a.params().end()),
            std::vector<float>(b.params().begin(), b.params().end()));
  EXPECT_NE(std::vector<float>(a.params().begin(), a.params().end()),
            std::vector<float>(c.params().begin(), c.params().end()));
  double sum = 0, sq = 0;
  const std::size_t n = 400 * 300;
  for (std::size_t i = 0; i < n; ++i) {
    sum += a.params()[i];
    sq += double{a.params()[i]} * a.params()[i];
  }
  EXPECT_NEAR(sum / n, 0.0, 0.002);
  EXPECT_NEAR(std::sqrt(sq / n), std::sqrt(2.0 / 400), 0.002);
  for (std::size_t i = n; i < n + 300; ++i) EXPECT_EQ(a.params()[i], 0.0f);
}

TEST(Mlp, GradientsMatchFiniteDifferences) {
  Mlp m({6, 5, 4, 3});
  m.init(11);
  // Non-zero biases, so their gradients are exercised away from the initial point too.
  Rng rng(3);
  for (float& p : m.params()) p += static_cast<float>(0.1 * rng.normal());
  const Batch b = random_batch(8, 6, 3, 9);
  m.loss_and_grads(b.images.data(), b.labels.data(), 8);
  const std::vector<float> analytic(m.grads().begin(), m.grads().end());
  const float eps = 1e-2f;
  for (std::size_t i = 0; i < m.params().size(); ++i) {
    const float saved = m.params()[i];
    m.params()[i] = saved + eps;
    const double up = m.loss_and_grads(b.images.data(), b.labels.data(), 8);
    m.params()[i] = saved - eps;
    const double down = m.loss_and_grads(b.images.data(), b.labels.data(), 8);
    m.params()[i] = saved;
    EXPECT_NEAR(analytic[i], (up - down) / (2 * eps), 2e-3) << "parameter " << i;
  }
}

TEST(Mlp, LossOfUniformScoresIsLogClasses) {
  Mlp m({3, 10});  // all-zero parameters: every class equally likely
  const Batch b = random_batch(4, 3, 10, 1);
  EXPECT_NEAR(m.loss_and_grads(b.images.data(), b.labels.data(), 4), std::log(10.0), 1e-6);
}

TEST(Mlp, TrainingFitsASmallProblem) {
  Mlp m({6, 16, 3});
  m.init(1);
  Sgd sgd(m.params().size(), 0.9f);
  const Batch b = random_batch(24, 6, 3, 4);
  const float first = m.loss_and_grads(b.images.data(), b.labels.data(), 24);
  for (int i = 0; i < 300; ++i) {
    m.loss_and_grads(b.images.data(), b.labels.data(), 24);
    sgd.step(m.params(), m.grads(), 0.05f);
  }
  EXPECT_LT(m.loss_and_grads(b.images.data(), b.labels.data(), 24), 0.05f * first);
  EXPECT_EQ(m.count_correct(b.images.data(), b.labels.data(), 24), 24u);
}

TEST(Sgd, AppliesMomentum) {
  Sgd sgd(1, 0.5f);
  std::vector<float> p = {1.0f};
  const std::vector<float> g = {2.0f};
  sgd.step(p, g, 0.1f);  // v = 2, p = 1 - 0.2
  EXPECT_FLOAT_EQ(p[0], 0.8f);
  sgd.step(p, g, 0.1f);  // v = 0.5 * 2 + 2 = 3, p = 0.8 - 0.3
  EXPECT_FLOAT_EQ(p[0], 0.5f);
  EXPECT_FLOAT_EQ(sgd.velocity()[0], 3.0f);
}

TEST(LearningRate, ScalesWithTheGlobalBatchAfterAWarmUp) {
  // base 0.05 for a batch of 64; batch 256 peaks at 0.2 after 10 warm-up steps of 100.
  EXPECT_FLOAT_EQ(learning_rate(0, 0.05f, 256, 10, 100), 0.05f + 0.15f / 10);
  EXPECT_FLOAT_EQ(learning_rate(4, 0.05f, 256, 10, 100), 0.05f + 0.15f / 2);
  EXPECT_FLOAT_EQ(learning_rate(9, 0.05f, 256, 10, 100), 0.2f);
  EXPECT_FLOAT_EQ(learning_rate(10, 0.05f, 64, 10, 100), 0.05f);
}

TEST(LearningRate, FollowsACosineToZero) {
  EXPECT_FLOAT_EQ(learning_rate(10, 0.05f, 128, 10, 110), 0.1f);
  EXPECT_FLOAT_EQ(learning_rate(60, 0.05f, 128, 10, 110), 0.05f);
  EXPECT_NEAR(learning_rate(109, 0.05f, 128, 10, 110), 0.0f, 1e-4);
  EXPECT_EQ(learning_rate(110, 0.05f, 128, 10, 110), 0.0f);
}

}  // namespace
}  // namespace fmnist
