// dtrain::Shard: which samples of a data set this rank reads in an epoch. Every rank builds the
// same Shard (same sample count, seed and options) and gets a disjoint share of one order that is
// identical on every rank: with shuffling, one permutation per (seed, epoch) drawn from
// libdtrain's own generator, so the order is the same across runs, machines and compilers. Rank r
// takes every world-th position of that order starting at r, as torch's DistributedSampler does.
//
//   dtrain::Shard shard(dataset_size, ctx.world(), {.shuffle = true, .seed = 42});
//   for (std::uint64_t i : shard.indices(epoch)) { ... }
//
// A Shard is a value: cheap to copy, no I/O, safe to use from several threads.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace dtrain {

// What happens to the samples that do not divide evenly among the ranks.
enum class ShardTail {
  // Pad by wrapping around to the start of the epoch's order, so every rank gets
  // ceil(N / world) samples (a few samples are seen twice). DistributedSampler's drop_last=false.
  kPad,
  // Drop the last N % world positions of the order, so every rank gets floor(N / world) samples
  // (the dropped samples change from epoch to epoch when shuffling). drop_last=true.
  kDrop,
  // Every sample exactly once, for evaluation: no padding, so ranks r < N % world get one sample
  // more than the others. A loop that runs a collective per sample must then let the ranks with
  // fewer samples take part without data, or they deadlock at the last collective.
  kExactOnce,
};

struct ShardOptions {
  bool shuffle = true;
  // With shuffle, the permutation of epoch e is a function of (seed, e) only.
  std::uint64_t seed = 0;
  ShardTail tail = ShardTail::kPad;
};

class DTRAIN_API Shard {
 public:
  // Throws Error (kInvalid) when rank is not in [0, world) or world < 1.
  Shard(std::uint64_t num_samples, int rank, int world, ShardOptions options = {});
  Shard(std::uint64_t num_samples, const WorldInfo& world, ShardOptions options = {})
      : Shard(num_samples, world.rank, world.size, options) {}

  std::uint64_t num_samples() const { return num_samples_; }
  int rank() const { return rank_; }
  int world() const { return world_; }
  const ShardOptions& options() const { return options_; }

  // How many samples this rank gets per epoch (the same on every rank except with kExactOnce).
  std::uint64_t size() const;
  // The samples all ranks together get per epoch (size() summed over the ranks).
  std::uint64_t total_size() const;

  // This rank's sample indices for `epoch`, in order, from position `consumed` on: a job resumed
  // mid-epoch passes the number of samples this rank had already taken in that epoch and goes on
  // with exactly the rest of the same order. Throws Error (kInvalid) when consumed > size().
  std::vector<std::uint64_t> indices(std::uint64_t epoch, std::uint64_t consumed = 0) const;
  // The i-th sample of this rank in `epoch` (i < size(); Error kInvalid otherwise), without
  // building the list.
  std::uint64_t at(std::uint64_t epoch, std::uint64_t i) const;

  // The same selection applied to a list (files of a data set, one per sample): `items` must hold
  // num_samples() entries (Error kInvalid naming both counts otherwise).
  std::vector<std::string> select(std::span<const std::string> items, std::uint64_t epoch,
                                  std::uint64_t consumed = 0) const;

 private:
  std::uint64_t num_samples_;
  int rank_;
  int world_;
  ShardOptions options_;
};

}  // namespace dtrain
