#include "mlp.hpp"

#include "eigen_maps.hpp"
#include "rng.hpp"
#include "softmax_loss.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace fmnist {
namespace {

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
  allocate(size);
  activations_.resize(widths_.size());
}

std::string Mlp::describe() const {
  std::string text = "mlp";
  for (std::size_t l = 1; l + 1 < widths_.size(); ++l) {
    text += l == 1 ? ' ' : ',';
    text += std::to_string(widths_[l]);
  }
  return text;
}

void Mlp::init(std::uint64_t seed) {
  Rng rng(seed);
  for (std::size_t l = 0; l + 1 < widths_.size(); ++l) {
    const auto in = static_cast<std::size_t>(widths_[l]);
    const auto out = static_cast<std::size_t>(widths_[l + 1]);
    const double stddev = std::sqrt(2.0 / static_cast<double>(in));
    float* w = params().data() + offsets_[l];
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
    ConstMatrixMap w(params().data() + offsets_[l], in, out);
    Eigen::Map<const Eigen::RowVectorXf> b(params().data() + offsets_[l] + in * out, out);
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

  const double loss = softmax_cross_entropy(activations_.back().data(), labels, batch,
                                            static_cast<int>(classes), batch);

  // Back-propagate: delta holds dLoss/dZ of layer l, in a buffer of its own.
  std::vector<float> delta(activations_.back());
  std::vector<float> next;
  for (std::size_t l = layers; l-- > 0;) {
    const Eigen::Index in = widths_[l];
    const Eigen::Index out = widths_[l + 1];
    const float* input = l == 0 ? images : activations_[l].data();
    ConstMatrixMap a(input, rows, in);
    ConstMatrixMap d(delta.data(), rows, out);
    MatrixMap gw(grads().data() + offsets_[l], in, out);
    RowMap gb(grads().data() + offsets_[l] + in * out, out);
    gw.noalias() = a.transpose() * d;
    gb = d.colwise().sum();
    if (l == 0) break;
    next.resize(batch * static_cast<std::size_t>(in));
    MatrixMap da(next.data(), rows, in);
    ConstMatrixMap w(params().data() + offsets_[l], in, out);
    da.noalias() = d * w.transpose();
    // ReLU: the gradient passes where the activation was positive.
    da = (a.array() > 0.0f).select(da, 0.0f);
    delta.swap(next);
  }
  return static_cast<float>(loss / static_cast<double>(batch));
}

std::size_t Mlp::count_correct(const float* images, const std::uint8_t* labels, std::size_t n) {
  std::size_t correct = 0;
  const int classes = widths_.back();
  const std::size_t features = static_cast<std::size_t>(widths_.front());
  for (std::size_t start = 0; start < n; start += kEvalChunk) {
    const std::size_t rows = std::min(kEvalChunk, n - start);
    forward(images + start * features, rows);
    for (std::size_t i = 0; i < rows; ++i) {
      const float* scores = activations_.back().data() + i * static_cast<std::size_t>(classes);
      correct += predicted_class(scores, classes) == labels[start + i];
    }
  }
  return correct;
}

}  // namespace fmnist
