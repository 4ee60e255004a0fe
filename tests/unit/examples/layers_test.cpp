#include "layers.hpp"
#include "cnn.hpp"
#include "mlp.hpp"
#include "rng.hpp"
#include "softmax_loss.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <vector>

namespace fmnist {
namespace {

struct Batch {
  std::vector<float> images;
  std::vector<std::uint8_t> labels;
};

Batch random_batch(std::size_t n, std::size_t features, std::uint64_t seed) {
  Rng rng(seed);
  Batch b;
  for (std::size_t i = 0; i < n * features; ++i) {
    b.images.push_back(static_cast<float>(rng.normal()));
  }
  for (std::size_t i = 0; i < n; ++i) b.labels.push_back(static_cast<std::uint8_t>(rng.below(10)));
  return b;
}

// What a two-stage pipeline computes: layers [0, cut) and [cut, end) run apart, each over the
// chunks of Model::train_chunk() with records of its own, the first's output handed to the
// second and the second's input gradient handed back. Returns the loss; the gradients go into
// grads (the model's layout).
double in_two_pieces(const Model& m, std::size_t cut, const Batch& b, std::size_t batch,
                     std::vector<float>& grads) {
  const LayerList all = m.layers();
  const LayerList front = all.subspan(0, cut), back = all.subspan(cut);
  const float* params = m.params().data();
  const std::size_t back_params = m.param_offset(cut);
  const std::size_t chunk = m.train_chunk() > 0 ? m.train_chunk() : batch;
  const std::size_t in = all.front()->in_floats(), mid = front.back()->out_floats();
  grads.assign(m.params().size(), 0.0f);
  double loss = 0.0;
  for (std::size_t start = 0; start < batch; start += chunk) {
    const std::size_t n = std::min(chunk, batch - start);
    std::vector<Saved> saved_front(front.size()), saved_back(back.size());
    const float* h = forward_layers(front, params, b.images.data() + start * in, n, saved_front);
    const std::vector<float> sent(h, h + n * mid);  // the message to the next stage
    const float* s = forward_layers(back, params + back_params, sent.data(), n, saved_back);
    std::vector<float> scores(s, s + n * 10);
    loss += softmax_cross_entropy(scores.data(), b.labels.data() + start, n, 10, batch);
    std::vector<float> returned(n * mid);  // the message back
    backward_layers(back, params + back_params, grads.data() + back_params, saved_back,
                    scores.data(), n, returned.data());
    backward_layers(front, params, grads.data(), saved_front, returned.data(), n, nullptr);
  }
  return loss / static_cast<double>(batch);
}

TEST(Layers, ACnnSplitInTwoComputesWhatTheWholeDoesBitForBit) {
  Cnn m(3, 4);
  m.init(7);
  const Batch b = random_batch(20, 784, 3);  // 8 + 8 + 4: a partial last chunk too
  const float whole = m.loss_and_grads(b.images.data(), b.labels.data(), 20);
  const std::vector<float> g(m.grads().begin(), m.grads().end());
  for (std::size_t cut : {1u, 2u}) {
    std::vector<float> pieces;
    EXPECT_EQ(whole, static_cast<float>(in_two_pieces(m, cut, b, 20, pieces))) << "cut " << cut;
    EXPECT_EQ(g, pieces) << "cut " << cut;
  }
}

TEST(Layers, AnMlpSplitInTwoComputesWhatTheWholeDoesBitForBit) {
  Mlp m({784, 32, 16, 10});
  m.init(7);
  const Batch b = random_batch(12, 784, 4);
  const float whole = m.loss_and_grads(b.images.data(), b.labels.data(), 12);
  const std::vector<float> g(m.grads().begin(), m.grads().end());
  for (std::size_t cut : {1u, 2u}) {
    std::vector<float> pieces;
    EXPECT_EQ(whole, static_cast<float>(in_two_pieces(m, cut, b, 12, pieces))) << "cut " << cut;
    EXPECT_EQ(g, pieces) << "cut " << cut;
  }
}

TEST(Layers, SayTheirSizesAndCosts) {
  const ConvBlock conv({28, 28, 1, 5, 2}, 8);
  EXPECT_EQ(conv.in_floats(), 784u);
  EXPECT_EQ(conv.out_floats(), 14u * 14 * 8);
  EXPECT_EQ(conv.param_count(), 25u * 8 + 8);
  EXPECT_EQ(conv.macs(), 784u * 25 * 8);
  EXPECT_EQ(conv.describe(), "conv 5x5 8");
  const Dense dense(784, 10, false);
  EXPECT_EQ(dense.param_count(), 7850u);
  EXPECT_EQ(dense.macs(), 7840u);
  EXPECT_EQ(dense.describe(), "dense 784-10");
  Cnn cnn(8, 16);
  ASSERT_EQ(cnn.layers().size(), 3u);
  EXPECT_EQ(cnn.param_offset(1), 208u);
  EXPECT_EQ(cnn.param_offset(2), 208u + 72 * 16 + 16);
  EXPECT_EQ(cnn.train_chunk(), 8u);
}

}  // namespace
}  // namespace fmnist
