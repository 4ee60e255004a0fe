#include "cnn.hpp"

#include "eigen_maps.hpp"
#include "rng.hpp"
#include "softmax_loss.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fmnist {
namespace {

constexpr int kSide = 28;
constexpr int kOutputs = 10;

Eigen::Index idx(std::size_t v) { return static_cast<Eigen::Index>(v); }

int checked_channels(int c, const char* name) {
  if (c < 1 || c > 1024) {
    throw std::invalid_argument(std::string("Cnn: ") + name + ": expected 1-1024 channels, got " +
                                std::to_string(c));
  }
  return c;
}

// z (rows x channels) <- max(z + b, 0)
void add_bias_relu(MatrixMap z, ConstRowMap b) {
  z.rowwise() += b;
  z = z.cwiseMax(0.0f);
}

// Back through ReLU and the 2x2 max pool of a convolution block, then its weights: dz receives
// the gradient of the block's pre-activation (rows x channels) from that of its pooled output,
// and the weights (patch x channels) and biases gain the chunk's gradient from the im2col
// patches `cols` (rows x patch).
void conv_block_backward(const std::vector<float>& pooled_grad,
                         const std::vector<std::uint32_t>& argmax, const std::vector<float>& z,
                         const std::vector<float>& cols, std::size_t rows, std::size_t patch,
                         std::size_t channels, std::vector<float>& dz, float* gw, float* gb) {
  dz.assign(rows * channels, 0.0f);
  max_pool2_backward(pooled_grad.data(), argmax.data(), pooled_grad.size(), dz.data());
  // ReLU: the gradient passes where the activation was positive.
  for (std::size_t i = 0; i < dz.size(); ++i) dz[i] = z[i] > 0.0f ? dz[i] : 0.0f;
  ConstMatrixMap d(dz.data(), idx(rows), idx(channels));
  MatrixMap(gw, idx(patch), idx(channels)).noalias() +=
      ConstMatrixMap(cols.data(), idx(rows), idx(patch)).transpose() * d;
  RowMap(gb, idx(channels)) += d.colwise().sum();
}

}  // namespace

Cnn::Cnn(int channels1, int channels2)
    : c1_(checked_channels(channels1, "first layer")),
      c2_(checked_channels(channels2, "second layer")),
      conv1_{kSide, kSide, 1, 5, 2},
      conv2_{kSide / 2, kSide / 2, c1_, 3, 1} {
  const auto c1 = static_cast<std::size_t>(c1_);
  const auto c2 = static_cast<std::size_t>(c2_);
  w1_ = 0;
  b1_ = w1_ + conv1_.patch() * c1;
  w2_ = b1_ + c1;
  b2_ = w2_ + conv2_.patch() * c2;
  w3_ = b2_ + c2;
  b3_ = w3_ + 49 * c2 * kOutputs;
  allocate(b3_ + kOutputs);
}

std::string Cnn::describe() const {
  return "cnn " + std::to_string(c1_) + "," + std::to_string(c2_);
}

void Cnn::init(std::uint64_t seed) {
  Rng rng(seed);
  float* p = params().data();
  const auto normal = [&](std::size_t at, std::size_t count, double variance) {
    const double stddev = std::sqrt(variance);
    for (std::size_t i = 0; i < count; ++i) p[at + i] = static_cast<float>(stddev * rng.normal());
  };
  std::fill(params().begin(), params().end(), 0.0f);
  // He for the convolutions, which a ReLU follows. The output layer starts at zero: every class
  // scores 0, the loss starts at log(10), and the first steps train it before the features move.
  // With random output weights the max-pooled features (mean well above 0) start the loss near
  // 3 and the first steps overshoot.
  normal(w1_, b1_ - w1_, 2.0 / static_cast<double>(conv1_.patch()));
  normal(w2_, b2_ - w2_, 2.0 / static_cast<double>(conv2_.patch()));
}

void Cnn::forward(const float* images, std::size_t n) {
  const auto c1 = static_cast<std::size_t>(c1_);
  const auto c2 = static_cast<std::size_t>(c2_);
  const std::size_t rows1 = n * conv1_.out_pixels();  // 28x28 per image
  const std::size_t rows2 = n * conv2_.out_pixels();  // 14x14 per image
  const float* p = params().data();

  cols1_.resize(rows1 * conv1_.patch());
  z1_.resize(rows1 * c1);
  im2col(images, n, conv1_, cols1_.data());
  MatrixMap z1(z1_.data(), idx(rows1), idx(c1));
  z1.noalias() = ConstMatrixMap(cols1_.data(), idx(rows1), idx(conv1_.patch())) *
                 ConstMatrixMap(p + w1_, idx(conv1_.patch()), idx(c1));
  add_bias_relu(z1, ConstRowMap(p + b1_, idx(c1)));

  p1_.resize(rows2 * c1);
  arg1_.resize(p1_.size());
  max_pool2(z1_.data(), n, kSide, kSide, c1_, p1_.data(), arg1_.data());

  cols2_.resize(rows2 * conv2_.patch());
  z2_.resize(rows2 * c2);
  im2col(p1_.data(), n, conv2_, cols2_.data());
  MatrixMap z2(z2_.data(), idx(rows2), idx(c2));
  z2.noalias() = ConstMatrixMap(cols2_.data(), idx(rows2), idx(conv2_.patch())) *
                 ConstMatrixMap(p + w2_, idx(conv2_.patch()), idx(c2));
  add_bias_relu(z2, ConstRowMap(p + b2_, idx(c2)));

  const std::size_t features = 49 * c2;
  p2_.resize(n * features);
  arg2_.resize(p2_.size());
  max_pool2(z2_.data(), n, kSide / 2, kSide / 2, c2_, p2_.data(), arg2_.data());

  logits_.resize(n * kOutputs);
  MatrixMap logits(logits_.data(), idx(n), kOutputs);
  logits.noalias() = ConstMatrixMap(p2_.data(), idx(n), idx(features)) *
                     ConstMatrixMap(p + w3_, idx(features), kOutputs);
  logits.rowwise() += ConstRowMap(p + b3_, kOutputs);
}

// Expects logits_ to hold d(loss)/d(logits) of the chunk; adds the chunk's parameter gradients to
// grads().
void Cnn::backward(std::size_t n) {
  const auto c1 = static_cast<std::size_t>(c1_);
  const auto c2 = static_cast<std::size_t>(c2_);
  const std::size_t rows1 = n * conv1_.out_pixels();
  const std::size_t rows2 = n * conv2_.out_pixels();
  const std::size_t features = 49 * c2;
  const float* p = params().data();
  float* g = grads().data();

  ConstMatrixMap dlogits(logits_.data(), idx(n), kOutputs);
  ConstMatrixMap p2(p2_.data(), idx(n), idx(features));
  MatrixMap(g + w3_, idx(features), kOutputs).noalias() += p2.transpose() * dlogits;
  RowMap(g + b3_, kOutputs) += dlogits.colwise().sum();
  dp2_.resize(n * features);
  MatrixMap(dp2_.data(), idx(n), idx(features)).noalias() =
      dlogits * ConstMatrixMap(p + w3_, idx(features), kOutputs).transpose();

  conv_block_backward(dp2_, arg2_, z2_, cols2_, rows2, conv2_.patch(), c2, dz2_, g + w2_, g + b2_);
  dcols2_.resize(rows2 * conv2_.patch());
  MatrixMap(dcols2_.data(), idx(rows2), idx(conv2_.patch())).noalias() =
      ConstMatrixMap(dz2_.data(), idx(rows2), idx(c2)) *
      ConstMatrixMap(p + w2_, idx(conv2_.patch()), idx(c2)).transpose();
  dp1_.assign(rows2 * c1, 0.0f);
  col2im_add(dcols2_.data(), n, conv2_, dp1_.data());

  // The first block's input gradient is not needed: the images are not trained.
  conv_block_backward(dp1_, arg1_, z1_, cols1_, rows1, conv1_.patch(), c1, dz1_, g + w1_, g + b1_);
}

float Cnn::loss_and_grads(const float* images, const std::uint8_t* labels, std::size_t batch) {
  std::fill(grads().begin(), grads().end(), 0.0f);
  const std::size_t pixels = conv1_.in_floats();
  double loss = 0.0;
  for (std::size_t start = 0; start < batch; start += kChunk) {
    const std::size_t n = std::min(kChunk, batch - start);
    forward(images + start * pixels, n);
    loss += softmax_cross_entropy(logits_.data(), labels + start, n, kOutputs, batch);
    backward(n);
  }
  return static_cast<float>(loss / static_cast<double>(batch));
}

std::size_t Cnn::count_correct(const float* images, const std::uint8_t* labels, std::size_t n) {
  const std::size_t pixels = conv1_.in_floats();
  std::size_t correct = 0;
  for (std::size_t start = 0; start < n; start += kChunk) {
    const std::size_t rows = std::min(kChunk, n - start);
    forward(images + start * pixels, rows);
    for (std::size_t i = 0; i < rows; ++i) {
      correct += predicted_class(logits_.data() + i * kOutputs, kOutputs) == labels[start + i];
    }
  }
  return correct;
}

}  // namespace fmnist
