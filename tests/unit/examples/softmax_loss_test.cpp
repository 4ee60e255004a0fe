#include "softmax_loss.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace fmnist {
namespace {

TEST(SoftmaxCrossEntropy, LossAndGradientOfKnownScores) {
  // Two rows of a batch of 4: equal scores (loss log 2), and a row sure of its label.
  std::vector<float> scores = {0.0f, 0.0f, 3.0f, 0.0f};
  const std::uint8_t labels[] = {0, 0};
  const double loss = softmax_cross_entropy(scores.data(), labels, 2, 2, 4);
  const double sure = std::log1p(std::exp(-3.0));
  EXPECT_NEAR(loss, std::log(2.0) + sure, 1e-6);
  const double p = 1.0 / (1.0 + std::exp(-3.0));
  EXPECT_NEAR(scores[0], (0.5 - 1.0) / 4, 1e-7);
  EXPECT_NEAR(scores[1], 0.5 / 4, 1e-7);
  EXPECT_NEAR(scores[2], (p - 1.0) / 4, 1e-7);
  EXPECT_NEAR(scores[3], (1.0 - p) / 4, 1e-7);
}

TEST(SoftmaxCrossEntropy, StaysFiniteWhenTheLabelsProbabilityUnderflows) {
  // exp(-2000) is 0 in float; the loss is still the exact 2000, not infinity.
  std::vector<float> scores = {1000.0f, -1000.0f};
  const std::uint8_t label = 1;
  const double loss = softmax_cross_entropy(scores.data(), &label, 1, 2, 1);
  EXPECT_DOUBLE_EQ(loss, 2000.0);
  EXPECT_FLOAT_EQ(scores[0], 1.0f);
  EXPECT_FLOAT_EQ(scores[1], -1.0f);
}

TEST(PredictedClass, TheFirstLargestScore) {
  const float scores[] = {0.5f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(predicted_class(scores, 4), 1);
}

}  // namespace
}  // namespace fmnist
