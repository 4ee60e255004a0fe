#include "mlp.hpp"

#include "rng.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace fmnist {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<Matrix>;
using ConstMatrixMap = Eigen::Map<const Matrix>;
using RowMap = Eigen::Map<Eigen::RowVectorXf>;

constexpr std::size_t kEvalChunk = 1000;

}  // namespace

Mlp::Mlp(std::vector<int> widths) : widths_(std::move(widths)) {
  if (widths_.size() < 2) {
    throw std::invalid_argument("Mlp: expected at least an input and an output width, got " +
                                std::to_string(widths_.size()) + " widths");
  }
  std::size_t size = 0;
  for (std::size_t l = 0; l < widths_.size(); ++l) {
    if (widths_[l] < 1) {
      throw std::invalid_argument("Mlp: layer width " + std::to_string(l) +
                                  ": expected at least 1, got " + std::to_string(widths_[l]));
    }
    if (l + 1 < widths_.size()) {
      offsets_.push_back(size);
      size += static_cast<std::size_t>(widths_[l] + 1) * static_cast<std::size_t>(widths_[l + 1]);
    }
  }
  params_.assign(size, 0.0f);
  grads_.assign(size, 0.0f);
  activations_.resize(widths_.size());
}

void Mlp::init(std::uint64_t seed) {
  Rng rng(seed);
  for (std::size_t l = 0; l + 1 < widths_.size(); ++l) {
    const auto in = static_cast<std::size_t>(widths_[l]);
    const auto out = static_cast<std::size_t>(widths_[l + 1]);
    const double stddev = std::sqrt(2.0 / static_cast<double>(in));
    float* w = params_.data() + offsets_[l];
    for (std::size_t i = 0; i < in * out; ++i) w[i] = static_cast<float>(stddev * rng.normal());
    std::fill(w + in * out, w + in * out + out, 0.0f);
  }
}

void Mlp::forward(const float* images, std::size_t batch) {
  const auto rows = static_cast<Eigen::Index>(batch);
  const std::size_t layers = widths_.size() - 1;
  for (std::size_t l = 0; l < layers; ++l) {
    const Eigen::Index in = widths_[l];
    const Eigen::Index out = widths_[l + 1];
    const float* input = l == 0 ? images : activations_[l].data();
    activations_[l + 1].resize(batch * static_cast<std::size_t>(out));
    ConstMatrixMap a(input, rows, in);
    ConstMatrixMap w(params_.data() + offsets_[l], in, out);
    Eigen::Map<const Eigen::RowVectorXf> b(params_.data() + offsets_[l] + in * out, out);
    MatrixMap z(activations_[l + 1].data(), rows, out);
    z.noalias() = a * w;
    z.rowwise() += b;
    if (l + 1 < layers) z = z.cwiseMax(0.0f);
  }
}

std::vector<float> Mlp::logits(const float* images, std::size_t batch) {
  forward(images, batch);
  return activations_.back();
}

float Mlp::loss_and_grads(const float* images, const std::uint8_t* labels, std::size_t batch) {
  forward(images, batch);
  const auto rows = static_cast<Eigen::Index>(batch);
  const std::size_t layers = widths_.size() - 1;
  const Eigen::Index classes = widths_.back();

  // Softmax in place, turned into the loss gradient (p - onehot) / batch.
  MatrixMap scores(activations_.back().data(), rows, classes);
  double loss = 0.0;
  for (Eigen::Index i = 0; i < rows; ++i) {
    auto row = scores.row(i);
    const float max = row.maxCoeff();
    row = (row.array() - max).exp();
    const float sum = row.sum();
    const int label = labels[i];
    loss -= std::log(static_cast<double>(row(label)) / sum);
    row /= sum;
    row(label) -= 1.0f;
  }
  scores /= static_cast<float>(batch);

  // Back-propagate: delta holds dLoss/dZ of layer l, in a buffer of its own.
  std::vector<float> delta(activations_.back());
  std::vector<float> next;
  for (std::size_t l = layers; l-- > 0;) {
    const Eigen::Index in = widths_[l];
    const Eigen::Index out = widths_[l + 1];
    const float* input = l == 0 ? images : activations_[l].data();
    ConstMatrixMap a(input, rows, in);
    ConstMatrixMap d(delta.data(), rows, out);
    MatrixMap gw(grads_.data() + offsets_[l], in, out);
    RowMap gb(grads_.data() + offsets_[l] + in * out, out);
    gw.noalias() = a.transpose() * d;
    gb = d.colwise().sum();
    if (l == 0) break;
    next.resize(batch * static_cast<std::size_t>(in));
    MatrixMap da(next.data(), rows, in);
    ConstMatrixMap w(params_.data() + offsets_[l], in, out);
    da.noalias() = d * w.transpose();
    // ReLU: the gradient passes where the activation was positive.
    da = (a.array() > 0.0f).select(da, 0.0f);
    delta.swap(next);
  }
  return static_cast<float>(loss / static_cast<double>(batch));
}

std::size_t Mlp::count_correct(const float* images, const std::uint8_t* labels, std::size_t n) {
  std::size_t correct = 0;
  const std::size_t features = static_cast<std::size_t>(widths_.front());
  for (std::size_t start = 0; start < n; start += kEvalChunk) {
    const std::size_t rows = std::min(kEvalChunk, n - start);
    forward(images + start * features, rows);
    ConstMatrixMap scores(activations_.back().data(), static_cast<Eigen::Index>(rows),
                          widths_.back());
    for (std::size_t i = 0; i < rows; ++i) {
      Eigen::Index best = 0;
      scores.row(static_cast<Eigen::Index>(i)).maxCoeff(&best);
      correct += (best == labels[start + i]);
    }
  }
  return correct;
}

void Sgd::step(std::span<float> params, std::span<const float> grads, float lr) {
  for (std::size_t i = 0; i < params.size(); ++i) {
    velocity_[i] = momentum_ * velocity_[i] + grads[i];
    params[i] -= lr * velocity_[i];
  }
}

float learning_rate(std::int64_t step, float base_lr, std::int64_t global_batch,
                    std::int64_t warmup_steps, std::int64_t total_steps) {
  const double peak = base_lr * static_cast<double>(global_batch) / 64.0;
  if (step < warmup_steps) {
    const double progress = static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
    return static_cast<float>(base_lr + (peak - base_lr) * progress);
  }
  if (step >= total_steps) return 0.0f;
  const double progress =
      static_cast<double>(step - warmup_steps) /
      static_cast<double>(std::max<std::int64_t>(1, total_steps - warmup_steps));
  return static_cast<float>(0.5 * peak * (1.0 + std::cos(std::numbers::pi * progress)));
}

}  // namespace fmnist
