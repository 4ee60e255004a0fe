// The allreduce for ranks on several nodes: the links between nodes are many times slower than
// memory inside a node, and a flat ring sends 1.5 S across each boundary of 2 nodes x 2 ranks
// where S is the least a node can send. So the node reduces first (shared memory,
// ShmAllreduce::reduce_scatter_piece), each local rank carries its share of the node's sum to
// the rank with the same local rank on every other node (PeerTransport: MPI point to point, or
// the TCP backend's sockets), combines the nodes' sums in node order, and the node shares the
// result again (ShmAllreduce::gather_piece). The message goes in pieces of
// ShmAllreduce::kPieceBytes with up to kDepth pieces on the network at once, so the node's work
// on later pieces overlaps the transfer of earlier ones and the time approaches the network's.
//
// Every rank ends with the same bits: a node's sum is reduced once, in local rank order, by the
// share's owner; the nodes' sums are combined in node order by every peer alike; the gather only
// copies. Peers exchange directly (each sends its share to each other node), which is what a
// ring sends on 2 nodes and no more than it on 3; beyond that hierarchy_pays() leaves the flat
// path (a ring among peers is the remaining step, issue 21).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "comm/shm_allreduce.hpp"
#include "settings.hpp"

namespace dtrain::runtime {

// Who shares this rank's node, from the hostname of every rank (the bootstrap's view).
struct NodeLayout {
  int node = 0;  // this rank's node; nodes are numbered in the order of their lowest rank
  int nodes = 1;
  int local_rank = 0;  // among the ranks of its node, in rank order
  int local_size = 1;
  std::vector<int> node_ranks;  // the ranks on this node, by local rank
  std::vector<int> peers;       // the rank with this local rank on each node, by node
  // Every node holds local_size ranks; else `counts` says what each holds ("node1: 2, node2: 1").
  bool uniform = true;
  std::string counts;
};
NodeLayout plan_layout(const std::vector<std::string>& host_of_rank, int rank);

// Above this an allreduce may go hierarchical; up to it the backend's latency-optimal route.
inline constexpr std::size_t kHierarchyMinBytes = std::size_t{64} << 10;

// Whether to set the hierarchy up at all: never for kFlat; for kAuto when some node holds more
// than one rank, there are 2 or 3 nodes and all hold the same number; kHierarchical forces it
// (one node or one rank per node included), and throws Error (kInvalid) naming the node counts
// when the nodes differ.
bool hierarchy_wanted(AllreduceAlgo algo, const NodeLayout& layout);
// With the hierarchy set up: whether an allreduce of `bytes` takes it (forced: always).
bool hierarchy_pays(AllreduceAlgo algo, std::size_t bytes);

// Moves one piece's shares between peers. Messages between two ranks arrive in the order they
// were posted. Called from one thread.
class PeerTransport {
 public:
  virtual ~PeerTransport() = default;
  // Starts sending `bytes` from `send` to rank `peer` and receiving as many from `peer` into
  // `recv`, as part of exchange `slot` (0 <= slot < HierarchicalAllreduce::kDepth).
  virtual void post(int slot, const void* send, void* recv, std::size_t bytes, int peer) = 0;
  // Moves what it can; true once every message of `slot` is complete.
  virtual bool done(int slot) = 0;
  // The peers whose message into `slot` has not arrived.
  virtual std::vector<int> waiting(int slot) const = 0;
};

class HierarchicalAllreduce {
 public:
  static constexpr int kDepth = 8;

  // `node` reduces among layout.node_ranks (its rank = layout.local_rank); `poll` is called
  // while waiting and may throw to abandon the call. Both must outlive this object.
  HierarchicalAllreduce(NodeLayout layout, ShmAllreduce& node, PeerTransport& net,
                        std::function<void()> poll);

  // Every rank calls it with the same count, type and op; in == out is in place; kAvg sums.
  void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op);

  // While a call waits: the ranks it waits for and why; "" when it does not wait.
  std::string missing_ranks() const;

 private:
  struct Flight {
    char* out;
    std::size_t n;
  };
  char* scratch(int slot, int node);
  // Waits for piece `k`'s exchange, combines the nodes' sums and shares the result in the node.
  void finish(std::size_t k, DType type, ReduceOp op);
  void wait_network(int slot);

  NodeLayout layout_;
  ShmAllreduce& node_;
  PeerTransport& net_;
  std::function<void()> poll_;
  std::vector<char> scratch_;  // kDepth x nodes share buffers; touched once, kept
  Flight flights_[kDepth] = {};
  // What a stuck wait waits for, for missing_ranks() on the thread reporting a timeout.
  mutable std::mutex waiting_mutex_;
  std::string waiting_;
};

}  // namespace dtrain::runtime
