// Bus bandwidth: the algorithm bandwidth (bytes / time) scaled so that one number can be compared
// with the link speed whatever the number of ranks. The factors are nccl-tests'
// (doc/PERFORMANCE.md: an allgather or a reduce_scatter of a buffer of S bytes, S being the whole
// buffer with every rank's block, moves (n-1)/n of S over each rank's link; an allreduce, one of
// each, 2 (n-1)/n), so figures from `dtrain doctor`, bench/coll_bench and nccl-tests' *_perf line
// up.
#pragma once

namespace dtrain {

// (n-1)/n; 0 for a single rank, which moves nothing.
constexpr double allgather_bus_factor(int ranks) {
  return ranks < 2 ? 0.0 : 1.0 * (ranks - 1) / ranks;
}

// The allgather's: each rank sends the others' blocks of its input and receives its own.
constexpr double reduce_scatter_bus_factor(int ranks) { return allgather_bus_factor(ranks); }

// 2 (n-1)/n: a reduce_scatter, then an allgather.
constexpr double allreduce_bus_factor(int ranks) { return 2.0 * allgather_bus_factor(ranks); }

// busbw in the unit of `algbw`.
constexpr double allreduce_bus_bandwidth(double algbw, int ranks) {
  return algbw * allreduce_bus_factor(ranks);
}

}  // namespace dtrain
