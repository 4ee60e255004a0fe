#include "softmax_loss.hpp"

#include <algorithm>
#include <cmath>

namespace fmnist {

double softmax_cross_entropy(float* scores, const std::uint8_t* labels, std::size_t rows,
                             int classes, std::size_t batch) {
  double loss = 0.0;
  const float inv_batch = 1.0f / static_cast<float>(batch);
  for (std::size_t i = 0; i < rows; ++i) {
    float* row = scores + i * static_cast<std::size_t>(classes);
    const int label = labels[i];
    const float max = *std::max_element(row, row + classes);
    const float label_score = row[label] - max;
    float sum = 0.0f;
    for (int c = 0; c < classes; ++c) {
      row[c] = std::exp(row[c] - max);
      sum += row[c];
    }
    // -log(softmax) as log(sum) - (score - max): finite even where exp(score - max) underflows.
    loss += std::log(static_cast<double>(sum)) - static_cast<double>(label_score);
    for (int c = 0; c < classes; ++c) row[c] = row[c] / sum * inv_batch;
    row[label] -= inv_batch;
  }
  return loss;
}

int predicted_class(const float* scores, int classes) {
  return static_cast<int>(std::max_element(scores, scores + classes) - scores);
}

}  // namespace fmnist
