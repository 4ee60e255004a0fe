// Rabenseifner's allreduce (RecursiveDoubling::allreduce_halving, recursive_doubling.hpp): a
// reduce-scatter by recursive halving, then an allgather by recursive doubling, over the same
// partners and the same fold of the ranks beyond the power of two as the doubling
// (recursive_doubling.cpp). Where it is chosen: the router's halving_up_to (router.cpp).
#include <cstring>
#include <vector>

#include "comm/algorithms/recursive_doubling.hpp"
#include "comm/algorithms/reduce.hpp"

namespace dtrain::runtime {

void RecursiveDoubling::allreduce_halving(const void* in, void* out, std::size_t n, DType type,
                                          ReduceOp op) {
  const std::size_t elem = dtype_size(type);
  if (in != out) std::memcpy(out, in, n * elem);
  if (scratch_.size() < n * elem) scratch_.resize(n * elem);  // the fold receives all n
  char* data = static_cast<char*>(out);
  const auto at = [&](std::size_t i) { return data + i * elem; };
  const int group_rank = fold_in(out, n, type, op);
  if (group_rank >= 0) {
    // Reduce-scatter by recursive halving: at each step the range this rank still reduces halves,
    // the other half going to the partner, which sends this half back. The ranges it left, to
    // walk back up.
    struct Range {
      std::size_t lo, hi;
      bool kept_lower;
    };
    std::vector<Range> left;
    std::size_t lo = 0;
    std::size_t hi = n;
    for (int mask = group_size() / 2; mask >= 1; mask >>= 1) {
      const int peer = rank_of(group_rank ^ mask);
      const std::size_t mid = lo + (hi - lo) / 2;
      const bool lower = (group_rank & mask) == 0;
      const std::size_t keep_lo = lower ? lo : mid;
      const std::size_t keep_hi = lower ? mid : hi;
      const std::size_t give_lo = lower ? mid : lo;
      const std::size_t give_hi = lower ? hi : mid;
      transfer_(at(give_lo), (give_hi - give_lo) * elem, peer, scratch_.data(),
                (keep_hi - keep_lo) * elem, peer);
      // Each element is reduced on one rank only and then copied: the same bits everywhere.
      if (peer < rank_) {
        reduce_to(at(keep_lo), scratch_.data(), at(keep_lo), keep_hi - keep_lo, type, op);
      } else {
        reduce_to(at(keep_lo), at(keep_lo), scratch_.data(), keep_hi - keep_lo, type, op);
      }
      left.push_back({lo, hi, lower});
      lo = keep_lo;
      hi = keep_hi;
    }
    // Allgather by recursive doubling, the same partners in reverse: each step swaps the halves.
    for (int mask = 1; mask < group_size(); mask <<= 1) {
      const int peer = rank_of(group_rank ^ mask);
      const Range parent = left.back();
      left.pop_back();
      const std::size_t other_lo = parent.kept_lower ? hi : parent.lo;
      const std::size_t other_hi = parent.kept_lower ? parent.hi : lo;
      transfer_(at(lo), (hi - lo) * elem, peer, at(other_lo), (other_hi - other_lo) * elem, peer);
      lo = parent.lo;
      hi = parent.hi;
    }
  }
  fold_out(out, n * elem);
}

}  // namespace dtrain::runtime
