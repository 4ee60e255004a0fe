#include "comm/recursive_doubling.hpp"

#include <cstring>

#include "comm/reduce.hpp"

namespace dtrain::runtime {

bool doubling_pays(int size, bool across_nodes, std::size_t bytes) {
  constexpr std::size_t kOneNodeBytes = std::size_t{64} << 10;
  constexpr std::size_t kAcrossNodesBytes = std::size_t{4} << 10;
  return size == 2 || bytes <= (across_nodes ? kAcrossNodesBytes : kOneNodeBytes);
}

// Recursive doubling over the largest power of two p <= size; with size = p + rem, ranks below
// 2 * rem first fold pairwise (the even rank hands its data to the odd one and gets the result
// back at the end).
void RecursiveDoubling::allreduce(const void* in, void* out, std::size_t n, DType type,
                                  ReduceOp op) {
  const std::size_t bytes = n * dtype_size(type);
  if (in != out) std::memcpy(out, in, bytes);
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  void* peer_data = scratch_.data();
  int p = 1;
  while (p * 2 <= size_) p *= 2;
  const int rem = size_ - p;
  int group_rank = rank_ - rem;
  if (rank_ < 2 * rem) {
    if (rank_ % 2 == 0) {
      transfer_(out, bytes, rank_ + 1, nullptr, 0, -1);
      group_rank = -1;
    } else {
      transfer_(nullptr, 0, -1, peer_data, bytes, rank_ - 1);
      reduce_to(out, peer_data, out, n, type, op);
      group_rank = rank_ / 2;
    }
  }
  if (group_rank >= 0) {
    for (int mask = 1; mask < p; mask <<= 1) {
      const int g = group_rank ^ mask;
      const int peer = g < rem ? g * 2 + 1 : g + rem;
      transfer_(out, bytes, peer, peer_data, bytes, peer);
      if (peer < rank_) {
        reduce_to(out, peer_data, out, n, type, op);
      } else {
        reduce_to(out, out, peer_data, n, type, op);
      }
    }
  }
  if (rank_ < 2 * rem) {
    if (rank_ % 2 == 0) {
      transfer_(nullptr, 0, -1, out, bytes, rank_ + 1);
    } else {
      transfer_(out, bytes, rank_ - 1, nullptr, 0, -1);
    }
  }
}

}  // namespace dtrain::runtime
