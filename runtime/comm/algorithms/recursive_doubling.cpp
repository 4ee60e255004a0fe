#include "comm/algorithms/recursive_doubling.hpp"

#include <cstring>

#include "comm/algorithms/reduce.hpp"

namespace dtrain::runtime {

bool doubling_pays(int size, bool across_nodes, std::size_t bytes) {
  constexpr std::size_t kOneNodeBytes = std::size_t{64} << 10;
  constexpr std::size_t kAcrossNodesBytes = std::size_t{4} << 10;
  return size == 2 || bytes <= (across_nodes ? kAcrossNodesBytes : kOneNodeBytes);
}

bool doubling_broadcast_pays(std::size_t bytes) { return bytes <= (std::size_t{64} << 10); }

// With size = p + rem (p the largest power of two <= size), ranks below 2 * rem first fold
// pairwise: the even rank hands its data to the odd one, which reduces it and takes part for both
// (group rank r / 2); the others take part as group rank r - rem. -1: this rank sits out.
int RecursiveDoubling::fold_in(void* data, std::size_t n, DType type, ReduceOp op) {
  const std::size_t bytes = n * dtype_size(type);
  const int rem = size_ - group_size();
  if (rank_ >= 2 * rem) return rank_ - rem;
  if (rank_ % 2 == 0) {
    transfer_(data, bytes, rank_ + 1, nullptr, 0, -1);
    return -1;
  }
  transfer_(nullptr, 0, -1, scratch_.data(), bytes, rank_ - 1);
  reduce_to(data, scratch_.data(), data, n, type, op);
  return rank_ / 2;
}

// The folded even rank gets the result back from its odd partner.
void RecursiveDoubling::fold_out(void* data, std::size_t bytes) {
  const int rem = size_ - group_size();
  if (rank_ >= 2 * rem) return;
  if (rank_ % 2 == 0) {
    transfer_(nullptr, 0, -1, data, bytes, rank_ + 1);
  } else {
    transfer_(data, bytes, rank_ - 1, nullptr, 0, -1);
  }
}

int RecursiveDoubling::group_size() const {
  int p = 1;
  while (p * 2 <= size_) p *= 2;
  return p;
}

int RecursiveDoubling::rank_of(int group_rank) const {
  const int rem = size_ - group_size();
  return group_rank < rem ? group_rank * 2 + 1 : group_rank + rem;
}

int RecursiveDoubling::group_rank_of(int rank) const {
  const int rem = size_ - group_size();
  return rank < 2 * rem ? rank / 2 : rank - rem;
}

void RecursiveDoubling::broadcast(void* data, std::size_t bytes, int root) {
  const int rem = size_ - group_size();
  // A message of `bytes` when `carries`, else an empty one (its header alone, on TCP).
  const auto size_if = [&](bool carries) { return carries ? bytes : 0; };
  bool have = rank_ == root;
  // fold_in's edges: a folded even root hands its data to its odd partner.
  if (rank_ < 2 * rem) {
    if (rank_ % 2 == 0) {
      transfer_(data, size_if(have), rank_ + 1, nullptr, 0, -1);
    } else {
      transfer_(nullptr, 0, -1, data, size_if(root == rank_ - 1), rank_ - 1);
      have = have || root == rank_ - 1;
    }
  }
  const bool sits_out = rank_ < 2 * rem && rank_ % 2 == 0;
  if (!sits_out) {
    // Before the step of `mask` the data is at the group ranks that differ from the root's in
    // the bits below it only; of each pair of partners, one has it or neither does.
    const int group_root = group_rank_of(root);
    const int group_rank = group_rank_of(rank_);
    for (int mask = 1; mask < group_size(); mask <<= 1) {
      const int peer_group_rank = group_rank ^ mask;
      const bool peer_has = (peer_group_rank ^ group_root) < mask;
      transfer_(data, size_if(have && !peer_has), rank_of(peer_group_rank), data, size_if(peer_has),
                rank_of(peer_group_rank));
      have = have || peer_has;
    }
  }
  // fold_out's edges: the odd partner hands the data back, unless the even rank is the root.
  if (rank_ < 2 * rem) {
    if (rank_ % 2 == 0) {
      transfer_(nullptr, 0, -1, data, size_if(!have), rank_ + 1);
    } else {
      transfer_(data, size_if(root != rank_ - 1), rank_ - 1, nullptr, 0, -1);
    }
  }
}

void RecursiveDoubling::allreduce(const void* in, void* out, std::size_t n, DType type,
                                  ReduceOp op) {
  const std::size_t bytes = n * dtype_size(type);
  if (in != out) std::memcpy(out, in, bytes);
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  void* peer_data = scratch_.data();
  const int group_rank = fold_in(out, n, type, op);
  if (group_rank >= 0) {
    for (int mask = 1; mask < group_size(); mask <<= 1) {
      const int peer = rank_of(group_rank ^ mask);
      transfer_(out, bytes, peer, peer_data, bytes, peer);
      if (peer < rank_) {
        reduce_to(out, peer_data, out, n, type, op);
      } else {
        reduce_to(out, out, peer_data, n, type, op);
      }
    }
  }
  fold_out(out, bytes);
}

}  // namespace dtrain::runtime
