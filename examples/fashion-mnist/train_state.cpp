#include "train_state.hpp"

#include "idx.hpp"

#include <cstring>

namespace fmnist {
namespace {

constexpr char kMagic[8] = {'F', 'M', 'N', 'I', 'S', 'T', 'C', 'K'};
constexpr std::uint32_t kVersion = 1;

struct Header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t reserved;
  std::int64_t epoch;
  std::int64_t step_in_epoch;
  std::int64_t global_step;
  double epoch_loss_sum;
  std::int64_t global_batch;
  std::uint64_t seed;
  std::uint64_t param_count;
};

std::uint64_t fnv1a(std::span<const std::uint8_t> bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ULL;
  return h;
}

template <typename T>
void append(std::vector<std::uint8_t>& out, const T* data, std::size_t count) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(data);
  out.insert(out.end(), p, p + sizeof(T) * count);
}

}  // namespace

std::vector<std::uint8_t> encode_state(const TrainPosition& pos, std::span<const float> params,
                                       std::span<const float> velocity) {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.epoch = pos.epoch;
  h.step_in_epoch = pos.step_in_epoch;
  h.global_step = pos.global_step;
  h.epoch_loss_sum = pos.epoch_loss_sum;
  h.global_batch = pos.global_batch;
  h.seed = pos.seed;
  h.param_count = params.size();
  std::vector<std::uint8_t> out;
  append(out, &h, 1);
  append(out, params.data(), params.size());
  append(out, velocity.data(), velocity.size());
  const std::uint64_t checksum = fnv1a(out);
  append(out, &checksum, 1);
  return out;
}

TrainPosition decode_state(std::span<const std::uint8_t> bytes, const std::string& name,
                           std::span<float> params, std::span<float> velocity) {
  Header h{};
  if (bytes.size() < sizeof h) {
    throw DataError(name + ": truncated checkpoint; expected a " + std::to_string(sizeof h) +
                    "-byte header, got " + std::to_string(bytes.size()) + " bytes");
  }
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) {
    throw DataError(name + ": not a Fashion-MNIST example checkpoint; expected magic FMNISTCK");
  }
  if (h.version != kVersion) {
    throw DataError(name + ": checkpoint version; expected " + std::to_string(kVersion) + ", got " +
                    std::to_string(h.version));
  }
  if (h.param_count != params.size() || velocity.size() != params.size()) {
    throw DataError(name + ": checkpoint of a different model; expected " +
                    std::to_string(params.size()) + " parameters, got " +
                    std::to_string(h.param_count));
  }
  const std::size_t floats = 2 * params.size() * sizeof(float);
  const std::size_t expected = sizeof h + floats + sizeof(std::uint64_t);
  if (bytes.size() != expected) {
    throw DataError(name + ": checkpoint size; expected " + std::to_string(expected) +
                    " bytes, got " + std::to_string(bytes.size()));
  }
  std::uint64_t checksum = 0;
  std::memcpy(&checksum, bytes.data() + sizeof h + floats, sizeof checksum);
  if (checksum != fnv1a(bytes.first(sizeof h + floats))) {
    throw DataError(name + ": checkpoint checksum mismatch (a damaged file)");
  }
  std::memcpy(params.data(), bytes.data() + sizeof h, params.size_bytes());
  std::memcpy(velocity.data(), bytes.data() + sizeof h + params.size_bytes(),
              velocity.size_bytes());
  return {h.epoch, h.step_in_epoch, h.global_step, h.epoch_loss_sum, h.global_batch, h.seed};
}

}  // namespace fmnist
