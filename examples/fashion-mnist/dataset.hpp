// Fashion-MNIST in memory: 28x28 grey images as normalized floats, one row per image, and their
// labels 0-9. make_dataset() is pure (it checks that the two IDX arrays belong together);
// find_data_dir() and load_split() touch the file system.
#pragma once

#include "idx.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fmnist {

// Where Debian's dataset-fashion-mnist package installs the original gzip files.
inline constexpr const char* kDebianDataDir = "/usr/share/datasets/fashion-mnist";
inline constexpr int kClasses = 10;

struct Dataset {
  std::size_t count = 0;
  std::size_t features = 0;   // pixels per image (784)
  std::vector<float> images;  // count x features, row-major
  std::vector<std::uint8_t> labels;

  const float* image(std::size_t i) const { return images.data() + i * features; }
};

// Pixels are scaled to [0, 1] and standardized with the training set's mean and standard
// deviation (0.2860, 0.3530), as the reference Fashion-MNIST code does. Throws DataError naming
// the files when the counts differ, the images are not 3-D, or a label is not 0-9.
Dataset make_dataset(const IdxArray& images, const IdxArray& labels, const std::string& images_name,
                     const std::string& labels_name);

// `given` (from --data) when not empty, else kDebianDataDir. Throws DataError when a file is
// missing, saying which and how to get them (the Debian package, or --data).
std::string find_data_dir(const std::string& given);

// `split` is "train" or "t10k": reads DIR/<split>-images-idx3-ubyte.gz and
// DIR/<split>-labels-idx1-ubyte.gz.
Dataset load_split(const std::string& dir, const std::string& split);

// The images and labels of the samples `indices` of `data`, in that order: a batch.
void gather_batch(const Dataset& data, std::span<const std::uint64_t> indices,
                  std::vector<float>& images, std::vector<std::uint8_t>& labels);

}  // namespace fmnist
