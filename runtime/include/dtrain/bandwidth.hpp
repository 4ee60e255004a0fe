// Bus bandwidth: the algorithm bandwidth (bytes / time) scaled so that one number can be compared
// with the link speed whatever the number of ranks. The factor is nccl-tests' (doc/PERFORMANCE.md:
// an allreduce moves 2 (n-1)/n of the buffer over each rank's link), so figures from `dtrain
// doctor`, bench/coll_bench and nccl-tests' all_reduce_perf line up.
#pragma once

namespace dtrain {

// 2 (n-1)/n; 0 for a single rank, which moves nothing.
constexpr double allreduce_bus_factor(int ranks) {
  return ranks < 2 ? 0.0 : 2.0 * (ranks - 1) / ranks;
}

// busbw in the unit of `algbw`.
constexpr double allreduce_bus_bandwidth(double algbw, int ranks) {
  return algbw * allreduce_bus_factor(ranks);
}

}  // namespace dtrain
