#include "model.hpp"

#include "softmax_loss.hpp"

#include <algorithm>

namespace fmnist {

void Model::add_layer(std::unique_ptr<Layer> layer) {
  offsets_.push_back(params_.size());
  params_.resize(params_.size() + layer->param_count(), 0.0f);
  grads_.resize(params_.size(), 0.0f);
  layers_.push_back(std::move(layer));
  saved_.resize(layers_.size());
}

float Model::loss_and_grads(const float* images, const std::uint8_t* labels, std::size_t batch) {
  std::fill(grads_.begin(), grads_.end(), 0.0f);
  const std::size_t pixels = layers_.front()->in_floats();
  const auto classes = static_cast<int>(layers_.back()->out_floats());
  const std::size_t chunk = train_chunk_ > 0 ? train_chunk_ : batch;
  double loss = 0.0;
  for (std::size_t start = 0; start < batch; start += chunk) {
    const std::size_t n = std::min(chunk, batch - start);
    const float* scores =
        forward_layers(layers_, params_.data(), images + start * pixels, n, saved_);
    scores_grad_.assign(scores, scores + n * static_cast<std::size_t>(classes));
    loss += softmax_cross_entropy(scores_grad_.data(), labels + start, n, classes, batch);
    // The images are not trained: the first layer's input gradient is not needed.
    backward_layers(layers_, params_.data(), grads_.data(), saved_, scores_grad_.data(), n,
                    nullptr);
  }
  return static_cast<float>(loss / static_cast<double>(batch));
}

std::size_t Model::count_correct(const float* images, const std::uint8_t* labels, std::size_t n) {
  const std::size_t pixels = layers_.front()->in_floats();
  const auto classes = static_cast<int>(layers_.back()->out_floats());
  std::size_t correct = 0;
  for (std::size_t start = 0; start < n; start += eval_chunk_) {
    const std::size_t rows = std::min(eval_chunk_, n - start);
    const float* scores =
        forward_layers(layers_, params_.data(), images + start * pixels, rows, saved_);
    for (std::size_t i = 0; i < rows; ++i) {
      correct += predicted_class(scores + i * static_cast<std::size_t>(classes), classes) ==
                 labels[start + i];
    }
  }
  return correct;
}

}  // namespace fmnist
