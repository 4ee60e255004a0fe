// dtrain::Shard: DistributedSampler's arithmetic over the order that Permutation gives.
#include "dtrain/shard.hpp"

#include <string>

#include "data/permutation.hpp"

namespace dtrain {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw Error(Error::Code::kInvalid, "dtrain: shard: " + message);
}

}  // namespace

Shard::Shard(std::uint64_t num_samples, int rank, int world, ShardOptions options)
    : num_samples_(num_samples), rank_(rank), world_(world), options_(options) {
  if (world < 1) invalid("world size; expected at least 1, got " + std::to_string(world));
  if (rank < 0 || rank >= world) {
    invalid("rank; expected 0 to " + std::to_string(world - 1) + ", got " + std::to_string(rank));
  }
  if (options.tail != ShardTail::kPad && options.tail != ShardTail::kDrop &&
      options.tail != ShardTail::kExactOnce) {
    invalid("tail; expected kPad, kDrop or kExactOnce, got " +
            std::to_string(static_cast<int>(options.tail)));
  }
}

std::uint64_t Shard::size() const {
  const auto w = static_cast<std::uint64_t>(world_);
  const auto r = static_cast<std::uint64_t>(rank_);
  switch (options_.tail) {
    case ShardTail::kPad:
      return num_samples_ / w + (num_samples_ % w != 0 ? 1 : 0);
    case ShardTail::kDrop:
      return num_samples_ / w;
    case ShardTail::kExactOnce:
      return num_samples_ > r ? (num_samples_ - r - 1) / w + 1 : 0;
  }
  return 0;
}

std::uint64_t Shard::total_size() const {
  switch (options_.tail) {
    case ShardTail::kPad:
    case ShardTail::kDrop:
      return size() * static_cast<std::uint64_t>(world_);
    case ShardTail::kExactOnce:
      return num_samples_;
  }
  return 0;
}

std::uint64_t Shard::at(std::uint64_t epoch, std::uint64_t i) const {
  if (i >= size()) {
    invalid("position " + std::to_string(i) + " of rank " + std::to_string(rank_) +
            "; expected less than its " + std::to_string(size()) + " samples per epoch");
  }
  // The position in the epoch's global order; past the end only when padding, which wraps around.
  std::uint64_t position =
      static_cast<std::uint64_t>(rank_) + i * static_cast<std::uint64_t>(world_);
  if (position >= num_samples_) position = (position - num_samples_) % num_samples_;
  if (!options_.shuffle) return position;
  return runtime::Permutation(num_samples_, options_.seed, epoch)(position);
}

std::vector<std::uint64_t> Shard::indices(std::uint64_t epoch, std::uint64_t consumed) const {
  const std::uint64_t n = size();
  if (consumed > n) {
    invalid("consumed samples; expected at most the " + std::to_string(n) + " samples rank " +
            std::to_string(rank_) + " gets per epoch, got " + std::to_string(consumed));
  }
  std::vector<std::uint64_t> out;
  if (n - consumed > out.max_size()) {  // else std::length_error's bare "vector::reserve"
    invalid("indices: " + std::to_string(n - consumed) + " samples from position " +
            std::to_string(consumed) + "; expected at most " + std::to_string(out.max_size()) +
            " (what one list can hold): ask for a part with consumed, or use at()");
  }
  out.reserve(n - consumed);
  const auto w = static_cast<std::uint64_t>(world_);
  if (options_.shuffle && n > consumed) {
    const runtime::Permutation perm(num_samples_, options_.seed, epoch);
    for (std::uint64_t i = consumed; i < n; ++i) {
      std::uint64_t position = static_cast<std::uint64_t>(rank_) + i * w;
      if (position >= num_samples_) position = (position - num_samples_) % num_samples_;
      out.push_back(perm(position));
    }
  } else {
    for (std::uint64_t i = consumed; i < n; ++i) {
      std::uint64_t position = static_cast<std::uint64_t>(rank_) + i * w;
      if (position >= num_samples_) position = (position - num_samples_) % num_samples_;
      out.push_back(position);
    }
  }
  return out;
}

std::vector<std::string> Shard::select(std::span<const std::string> items, std::uint64_t epoch,
                                       std::uint64_t consumed) const {
  if (items.size() != num_samples_) {
    invalid("select: list size; expected the shard's " + std::to_string(num_samples_) +
            " samples, got " + std::to_string(items.size()) + " items");
  }
  std::vector<std::string> out;
  for (std::uint64_t i : indices(epoch, consumed)) out.push_back(items[i]);
  return out;
}

}  // namespace dtrain
