// The output layer's loss, shared by the models: softmax cross-entropy, turned in place into its
// gradient.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fmnist {

// `scores` holds rows x classes logits (row-major) of `rows` images with `labels`; they are
// replaced by d(loss)/d(scores) of a loss that is the mean over a batch of `batch` images
// ((softmax - onehot) / batch), and the sum of the rows' cross-entropies is returned.
double softmax_cross_entropy(float* scores, const std::uint8_t* labels, std::size_t rows,
                             int classes, std::size_t batch);

// The index of the largest of `classes` scores (the first on ties).
int predicted_class(const float* scores, int classes);

}  // namespace fmnist
