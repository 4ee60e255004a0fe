// dtrain's own allreduce for small messages (recursive doubling), apart from the transport that
// moves its bytes: the MPI communicator plugs in nonblocking point-to-point messages, the TCP
// communicator its sockets, and the unit test threads, so the algorithm is tested without mpirun.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

// Whether an allreduce of `bytes` on `size` ranks goes by recursive doubling rather than a
// bandwidth-optimal algorithm (MPI's, the TCP ring). On 2 ranks it is a single exchange, the same
// bytes the others move, in fewer steps. On one node, up to 64 KiB, where latency dominates: it
// measured as fast as MPI_Allreduce or faster (Open MPI 4.1, 2 ranks on shared memory: 16 KiB
// 8.7 vs 11.5 us, 64 KiB 22.8 vs 25.3 us; docs/benchmarks.md), and, waiting by polling, runs on
// the caller's thread. Across nodes (`across_nodes`) only up to 4 KiB: it sends the whole message
// over each node's link log2(p) times, and MPI's algorithms win from 16 KiB (4 nodes x 1 rank at
// 1 Gbit/s: 0.76 x MPI's speed at 16 KiB, 0.49 x at 64 KiB; at 4 KiB 0.84 x, where MPI_Allreduce
// handed to the progress thread ran at 0.67 x).
bool doubling_pays(int size, bool across_nodes, std::size_t bytes);

// Whether a broadcast of `bytes` goes by RecursiveDoubling::broadcast (one pass whose messages
// compare every rank's call as they carry the data) rather than a comparison round of its own
// and then a tree. Up to 64 KiB, where the round's latency is what a broadcast costs (4 ranks, 8 B
// and 4 KiB from a rotating root: 2.2-2.3 x the tree alone, docs/benchmarks.md); above it the
// round is lost in the transfer (16 MiB: within noise), and the tree, as measured, stays.
bool doubling_broadcast_pays(std::size_t bytes);

class RecursiveDoubling {
 public:
  // Sends `send_bytes` from `send` to rank `to` and receives `recv_bytes` into `recv` from rank
  // `from` (a rank of -1: no such message), returning once both are done. May throw to abandon
  // the call.
  using Transfer = std::function<void(const void* send, std::size_t send_bytes, int to, void* recv,
                                      std::size_t recv_bytes, int from)>;

  RecursiveDoubling(int rank, int size, Transfer transfer)
      : rank_(rank), size_(size), transfer_(std::move(transfer)) {}

  // Every rank calls it with the same n, type and op; `in == out` is in place. kAvg sums. Every
  // rank ends with the same bits: each exchange combines (lower rank's data) op (higher rank's).
  void allreduce(const void* in, void* out, std::size_t n, DType type, ReduceOp op);
  // Rabenseifner's allreduce (recursive_halving.cpp): a reduce-scatter by recursive halving, then
  // an allgather by recursive doubling. Each rank sends 2 (p - 1) / p of the message (the doubling:
  // log2(p) whole messages) in 2 log2(p) steps; for mid-sized messages. The same contract as
  // allreduce().
  void allreduce_halving(const void* in, void* out, std::size_t n, DType type, ReduceOp op);
  // `bytes` of `data` from rank `root` to every rank, over allreduce()'s partners in its order: a
  // message, maybe empty, on each of allreduce()'s edges, so that a transport that checks each
  // message against the receiver's own call (the TCP backend's header) compares every rank's
  // call as allreduce() would, and the data crosses each edge once at most (each rank receives it
  // once, as in a tree). Every rank calls it with the same bytes and root.
  void broadcast(void* data, std::size_t bytes, int root);

 private:
  int group_size() const;             // the largest power of two <= size
  int rank_of(int group_rank) const;  // the rank that takes part as `group_rank`
  int group_rank_of(int rank) const;  // its inverse; a folded even rank: its odd partner's
  // The fold of the ranks beyond the power of two (recursive_doubling.cpp); this rank's group
  // rank, or -1 where it sits out until fold_out().
  int fold_in(void* data, std::size_t n, DType type, ReduceOp op);
  void fold_out(void* data, std::size_t bytes);

  int rank_;
  int size_;
  Transfer transfer_;
  std::vector<char> scratch_;  // the peer's data; kept across calls
};

}  // namespace dtrain::runtime
