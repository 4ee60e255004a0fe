#include "dataset.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>

namespace fmnist {
namespace {

constexpr float kMean = 0.2860f;
constexpr float kStd = 0.3530f;
constexpr std::array<const char*, 2> kSplits = {"train", "t10k"};

std::string images_file(const std::string& dir, const std::string& split) {
  return dir + "/" + split + "-images-idx3-ubyte.gz";
}
std::string labels_file(const std::string& dir, const std::string& split) {
  return dir + "/" + split + "-labels-idx1-ubyte.gz";
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

Dataset make_dataset(const IdxArray& images, const IdxArray& labels, const std::string& images_name,
                     const std::string& labels_name) {
  if (images.dims.size() != 3) {
    throw DataError(images_name + ": expected 3 dimensions (images x rows x columns), got " +
                    std::to_string(images.dims.size()));
  }
  if (labels.dims.size() != 1 || labels.dims[0] != images.dims[0]) {
    throw DataError(labels_name + ": expected " + std::to_string(images.dims[0]) +
                    " labels (one per image of " + images_name + "), got " +
                    std::to_string(labels.data.size()));
  }
  Dataset out;
  out.count = images.dims[0];
  out.features = std::size_t{images.dims[1]} * images.dims[2];
  out.labels = labels.data;
  for (std::size_t i = 0; i < out.count; ++i) {
    if (out.labels[i] >= kClasses) {
      throw DataError(labels_name + ": label " + std::to_string(i) + ": expected 0-9, got " +
                      std::to_string(out.labels[i]));
    }
  }
  out.images.resize(images.data.size());
  for (std::size_t i = 0; i < images.data.size(); ++i) {
    out.images[i] = (static_cast<float>(images.data[i]) / 255.0f - kMean) / kStd;
  }
  return out;
}

std::string find_data_dir(const std::string& given) {
  const std::string dir = given.empty() ? kDebianDataDir : given;
  for (const char* split : kSplits) {
    for (const std::string& file : {images_file(dir, split), labels_file(dir, split)}) {
      if (is_file(file)) continue;
      if (given.empty()) {
        throw DataError(file +
                        ": no such file; the Fashion-MNIST data comes from Debian's "
                        "dataset-fashion-mnist package (sudo apt-get install "
                        "dataset-fashion-mnist), or pass --data DIR with the four "
                        "*-ubyte.gz files");
      }
      throw DataError(file + ": no such file; expected --data " + dir +
                      " to hold train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, "
                      "t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz (Debian's "
                      "dataset-fashion-mnist package installs them in " +
                      kDebianDataDir + ")");
    }
  }
  return dir;
}

Dataset load_split(const std::string& dir, const std::string& split) {
  const std::string images_name = images_file(dir, split);
  const std::string labels_name = labels_file(dir, split);
  const IdxArray images = parse_idx(read_gzip_file(images_name), images_name, 3);
  const IdxArray labels = parse_idx(read_gzip_file(labels_name), labels_name, 1);
  return make_dataset(images, labels, images_name, labels_name);
}

void gather_batch(const Dataset& data, std::span<const std::uint64_t> indices,
                  std::vector<float>& images, std::vector<std::uint8_t>& labels) {
  images.resize(indices.size() * data.features);
  labels.resize(indices.size());
  for (std::size_t i = 0; i < indices.size(); ++i) {
    std::copy_n(data.image(indices[i]), data.features, images.data() + i * data.features);
    labels[i] = data.labels[indices[i]];
  }
}

}  // namespace fmnist
