// The ring collectives (gloo's ring allreduce): reduce-scatter then allgather around the ranks,
// p - 1 steps each, every rank sending to rank + 1 while it receives from rank - 1, so each link
// carries (p - 1) / p of the message each way. Apart from the transport, like RecursiveDoubling:
// the TCP communicator plugs in its sockets (the flat path of its router), the unit tests threads.
#pragma once

#include <cstddef>
#include <vector>

#include "comm/algorithms/recursive_doubling.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

// One step of a ring of `size` positions, as position `position` takes it: the segment it sends
// to the next position, the one it receives from the previous, and whether it reduces what it
// receives into its own (else it keeps it). Segments are numbered by position. Reduce-scatter
// steps 0 .. size - 2 leave position r with segment r reduced over every position; allgather
// steps 0 .. size - 2 start from segment r complete at r and end with every segment everywhere.
// Ring and the hierarchy's ring among node peers (hierarchy.hpp) both walk these steps.
struct RingStep {
  int send;
  int recv;
  bool reduce;
};
RingStep ring_step(int position, int size, int step, bool allgather);

class Ring {
 public:
  // `transfer`: as RecursiveDoubling's; may throw to abandon the call.
  Ring(int rank, int size, RecursiveDoubling::Transfer transfer)
      : rank_(rank), size_(size), transfer_(std::move(transfer)) {}

  // As Communicator's calls; `in == out` is in place; kAvg sums.
  void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op);
  void reduce_scatter(const void* in, void* out, std::size_t count, DType type, ReduceOp op);
  void allgather(const void* in, void* out, std::size_t count, DType type);

  int next() const { return (rank_ + 1) % size_; }
  int prev() const { return (rank_ + size_ - 1) % size_; }

 private:
  // Segment s is elements [start[s], start[s + 1]) of `buf`. After reduce_scatter's p - 1 steps
  // rank r holds the reduction of segment r; allgather starts from segment r complete and ends
  // with all of them.
  void reduce_scatter_segments(char* buf, const std::vector<std::size_t>& start, std::size_t elem,
                               DType type, ReduceOp op);
  void allgather_segments(char* buf, const std::vector<std::size_t>& start, std::size_t elem);
  // Blocks of `count` elements, one per rank.
  std::vector<std::size_t> blocks(std::size_t count) const;

  int rank_;
  int size_;
  RecursiveDoubling::Transfer transfer_;
  std::vector<char> scratch_;  // one received segment; kept across calls
  std::vector<char> work_;     // reduce_scatter's copy of the input; kept across calls
};

}  // namespace dtrain::runtime
