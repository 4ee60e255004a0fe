// The one place where a host collective's path is chosen, for every backend that moves bytes
// between processes (MPI, TCP). The ladder, applied to each call:
//   1. every rank on this node and shared memory agreed: the node's shared memory (ShmAllreduce);
//   2. ranks on several nodes and the hierarchy takes the call at its size (hierarchy.hpp:
//      shared memory in each node, the node's share over the backend's PeerTransport);
//   3. an allreduce small enough that recursive doubling pays (doubling_pays), or, across nodes on
//      a backend whose own allreduce is a ring (TCP), up to halving_up_to: recursive halving then
//      doubling;
//   4. an allgather of at most log_step_allgather_up_to in all (TCP, whose own allgather is a
//      ring; MPI's own call makes that choice itself): log2(p) steps (log_step_allgather.hpp);
//   5. a reduce_scatter or allgather across nodes above kRingAbove: dtrain's ring over the
//      backend's point-to-point messages (where the hierarchy does not apply: nodes of different
//      sizes, DTRAIN_ALGO=flat), not MPI_Reduce_scatter_block, which ran at 0.20-0.3 of the link's
//      limit from 4 MiB (docs/benchmarks.md);
//   6. the backend's flat collective (MPI's own, the TCP ring).
// The router owns what the ladder chooses between: the node's ShmAllreduce, the hierarchy with
// its node reduction and link, the recursive doubling and the ring; and it decides, at set-up,
// which of them exist (Router::set_up: the one set-up ladder, the ranks' votes included). A
// backend gives it the rest: its flat collectives (FlatCollectives), its point-to-point transfer
// for the doubling and the ring, its collective set-up steps (NodeSetup: the votes' minimum, the
// node's shared memory mapped its own way, a POSIX object or an MPI window, which it frees after
// release(), and the hierarchy's link), and its `wait`, called while shared memory or the
// hierarchy waits, which enforces the deadline and names a lost peer (its loss diagnosis).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm/algorithms/hierarchy.hpp"
#include "comm/algorithms/recursive_doubling.hpp"
#include "comm/algorithms/ring.hpp"
#include "comm/communicator.hpp"
#include "comm/transport/shm/shm_allreduce.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

enum class Path { kSharedMemory, kHierarchy, kDoubling, kHalving, kLogSteps, kRing, kFlat };
// Above how many bytes (as sent) a reduce_scatter or allgather across nodes takes the ring.
inline constexpr std::size_t kRingAbove = std::size_t{1} << 20;
std::string_view path_name(Path path);

// Up to how many bytes an allreduce across nodes that neither recursive doubling nor the hierarchy
// takes goes by recursive halving then doubling (RecursiveDoubling::allreduce_halving) on
// `backend`: on TCP, whose own allreduce is a ring of 2 (p - 1) steps, each a wake-up of the
// receiving process, where halving takes 2 log2(p) steps and sends as few bytes. 0 on MPI, whose
// own call does the same.
std::size_t halving_up_to(LinkBackend backend);
// Up to how many bytes in all an allgather goes in log2(p) steps (log_step_allgather.hpp) on
// `backend`: the TCP backend's own allgather is a ring; MPI's call makes that choice itself, so 0.
std::size_t log_step_allgather_up_to(LinkBackend backend);

// What the ladder looks at, as every rank agreed it at set-up.
struct RouteFacts {
  int size = 1;
  bool shared_memory = false;     // every rank on this node, the node's shared memory mapped
  bool across_nodes = false;      // some rank is on another node
  std::size_t halving_up_to = 0;  // halving_up_to(backend) across nodes
  std::size_t log_step_allgather_up_to = 0;  // log_step_allgather_up_to(backend)
  // Above how many bytes each Collective takes the hierarchy (hierarchy_above); kNever when the
  // hierarchy was not set up.
  std::array<std::size_t, 3> hierarchy_above = {kNever, kNever, kNever};
};

// The ladder (above) for `op` of `bytes` as sent (every rank's block for reduce_scatter and
// allgather). Shared memory and recursive doubling serve allreduces only.
Path route(const RouteFacts& facts, Collective op, std::size_t bytes);

// A backend's own collectives, the ladder's last step; as Communicator's calls.
class FlatCollectives {
 public:
  virtual void flat_allreduce(const void* in, void* out, std::size_t count, DType type,
                              ReduceOp op) = 0;
  virtual void flat_reduce_scatter(const void* in, void* out, std::size_t count, DType type,
                                   ReduceOp op) = 0;
  virtual void flat_allgather(const void* in, void* out, std::size_t count, DType type) = 0;

 protected:
  ~FlatCollectives() = default;
};

// A backend's collective set-up steps, as Router::set_up takes them: each over every rank of the
// job, taken in the same order on every rank (the ladder's votes see to that).
class NodeSetup {
 public:
  // The least of every rank's `value`: the ladder's votes.
  virtual std::int32_t least(std::int32_t value) = 0;
  // Every rank's host name, by rank (may be collective).
  virtual std::vector<std::string> hosts() = 0;
  // The ranks `members` of each node (this rank's node, in rank order) map one shared memory, a
  // ShmAllreduce segment with pieces of `piece_bytes` per member, each prepared by its owner
  // before any rank returns; the segments by member, none on every rank when some rank could not
  // map its node's (or throws, the same on every rank).
  virtual std::vector<char*> map_node(const std::vector<int>& members, std::size_t piece_bytes) = 0;
  // The hierarchy's link to this rank's peers on other nodes (link_peers(layout)).
  virtual std::unique_ptr<PeerTransport> make_link(const NodeLayout& layout) = 0;

 protected:
  ~NodeSetup() = default;
};

class Router {
 public:
  // `flat` must outlive the router. `transfer`: the backend's point-to-point messages for the
  // doubling; `wait`: called while shared memory or the hierarchy waits, may throw to abandon
  // the call. `doubling_polls`: the transfer waits by calling the Engine's poll (MPI's
  // nonblocking messages), so a doubling may run on the caller's thread (polls()); the TCP
  // sockets wait with their own deadline instead.
  Router(int rank, int size, bool across_nodes, LinkBackend backend, FlatCollectives& flat,
         RecursiveDoubling::Transfer transfer, std::function<void()> wait, bool doubling_polls);
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // The set-up ladder, collective through `node`:
  //   1. every rank on one node: the least of every rank's `shm` (DTRAIN_SHM; one rank's 0 turns
  //      shared memory off for all), and where it is 1, the node's memory for every rank
  //      (share_node); done, unless the memory could not be mapped;
  //   2. else each rank alone, before any waits on another (what it may throw, it throws on every
  //      rank alike): the layout from the hosts and its vote (hierarchy_vote, with the agreed
  //      `shm` on one node);
  //   3. the least vote; where it is not 0, the node's memory for the hierarchy (members
  //      layout.node_ranks, Hierarchy::kPieceBytes pieces), none mapped ending the ladder, then the
  //      link (make_link) and the hierarchy (build_hierarchy).
  // Whatever is not set up leaves the calls to the doubling, the ring and the flat collectives.
  void set_up(AllreduceAlgo algo, bool shm, NodeSetup& node);
  // The ladder's rungs, for set_up and tests: every rank on this node, `segments` (by rank,
  // ShmAllreduce::segment_bytes(kPieceBytes, ranks) each, prepared) shared by all of them.
  void share_node(std::vector<char*> segments);
  // Ranks on several nodes whose agreed `vote` (hierarchy_vote, 1 or 2) wants the hierarchy:
  // `node_segments` by local rank (Hierarchy::kPieceBytes pieces), `link` to the peers on other
  // nodes.
  void build_hierarchy(NodeLayout layout, int vote, LinkBackend backend,
                       std::vector<char*> node_segments, std::unique_ptr<PeerTransport> link);
  // Drops the shared-memory paths, before the backend frees the memory under them.
  void release() noexcept;

  const RouteFacts& facts() const { return facts_; }
  Path path(Collective op, std::size_t bytes) const { return route(facts_, op, bytes); }

  void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op);
  // Many buffers as one message: only the node's shared memory has such a path (false: the
  // caller packs the parts itself).
  bool allreduce_parts(std::span<const AllreducePart> parts, DType type, ReduceOp op);
  void reduce_scatter(const void* in, void* out, std::size_t count, DType type, ReduceOp op);
  void allgather(const void* in, void* out, std::size_t count, DType type);
  // The doubling itself, at any size: the set-up votes and the barrier.
  RecursiveDoubling& doubling() { return doubling_; }
  // The ring over the same transfer: a backend whose flat collectives are rings (TCP) uses it.
  Ring& ring() { return ring_; }

  // The path allreduces take now, for users and metrics: "shared memory", "hierarchical" (from
  // some size on), else `backend`.
  std::string_view allreduce_transport(std::string_view backend) const;
  // Whether an allreduce of `bytes` waits only through `wait` or the Engine's poll, so that the
  // Engine may run it on the caller's thread.
  bool polls(std::size_t bytes) const;
  // While a shared-memory or hierarchical call waits: whom it waits for and why ("" otherwise).
  std::string missing_ranks() const;
  // The same ranks as numbers; `on_node_only`: in the hierarchy, only this node's ranks not yet
  // in the call, read afresh (the link sees a peer on another node go itself).
  std::vector<int> waiting(bool on_node_only = false) const;

 private:
  int rank_;
  LinkBackend backend_;
  RouteFacts facts_;
  FlatCollectives& flat_;
  std::function<void()> wait_;
  bool doubling_polls_;
  RecursiveDoubling::Transfer transfer_;  // the doubling's, the ring's, the log-step allgather's
  RecursiveDoubling doubling_;
  Ring ring_;
  std::unique_ptr<ShmAllreduce> shm_;  // every rank on this node
  // Ranks on several nodes: the link, the node's reduction over its segments, the hierarchy.
  std::unique_ptr<PeerTransport> link_;
  std::unique_ptr<ShmAllreduce> node_shm_;
  std::unique_ptr<Hierarchy> hier_;
};

}  // namespace dtrain::runtime
