// The collectives for ranks on several nodes: the links between nodes are many times slower than
// memory inside a node, and a flat ring sends 1.5 S across each boundary of 2 nodes x 2 ranks
// where S is the least a node can send. So each node works through shared memory
// (ShmAllreduce's piece halves) and only the node's share crosses the link, carried by local rank
// l to the rank with (about) the same local rank on every other node (PeerTransport: MPI point
// to point, or the TCP backend's sockets):
//   allreduce: the node reduces (reduce_scatter_piece), each local rank carries its share of the
//     node's sum to its peers, combines the nodes' sums in node order, and the node shares the
//     result again (gather_piece);
//   reduce_scatter: the node reduces, each local rank reducing the blocks it carries: its own and,
//     for every other node, the block of the rank there it sends to; each node sends (N - 1) / N
//     of S and receives as much, where a flat ring sends (p - 1) / p of S across each boundary
//     (0.5 S against 0.75 S on 2 x 2);
//   allgather: each rank sends its block to its peers, and the node then shares what its ranks
//     received (gather_piece): (N - 1) / N of S per node again.
// Messages go in pieces with up to kDepth of them on the network at once, so the node's work on
// later pieces overlaps the transfer of earlier ones and the time approaches the network's.
//
// How the peers exchange (peer_schedule): on 2 nodes of several ranks each, every pair of
// processes carries data one way only: local rank l of node 0 sends to local rank l of node 1,
// which sends to local rank l + 1 of node 0 (the allreduce relays: node 1 combines the two sums,
// node 0's first, and sends the result on). Open MPI's TCP transport moved only 0.51-0.55 x the
// one-way rate each way when one pair sent both ways at once inside a dtrain process
// (docs/benchmarks.md); one-way pairs move at the link's rate, as a ring's do. On a few nodes
// (one rank per node on 2, reduce_scatter and allgather up to kDirectNodes) peers exchange
// directly, local rank l with local rank l on every node: one step. Else the peers form a ring
// in node order, pipelined across the pieces in flight (a reduce-scatter then an allgather of
// the share for the allreduce; one of them for reduce_scatter and allgather): each node's link
// carries 2 (N - 1) / N of S each way for the allreduce, where the direct exchange sent
// (N - 1) S, and each rank talks to 2 peers whatever N is.
//
// Every rank ends with the same bits: a node's sum is reduced once, in local rank order, by the
// share's owner; the nodes' sums are combined in node order, once per share (relay) or by every
// peer alike (direct), or once per segment along the ring, which then only copies it on; the
// gathers only copy.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/algorithms/ring.hpp"
#include "comm/transport/shm/shm_allreduce.hpp"
#include "settings.hpp"

namespace dtrain::runtime {

// Who shares this rank's node, from the hostname of every rank (the bootstrap's view).
struct NodeLayout {
  int node = 0;  // this rank's node; nodes are numbered in the order of their lowest rank
  int nodes = 1;
  int local_rank = 0;  // among the ranks of its node, in rank order
  int local_size = 1;
  std::vector<int> node_ranks;          // the ranks on this node, by local rank
  std::vector<int> peers;               // the rank with this local rank on each node, by node
  std::vector<std::vector<int>> ranks;  // every node's ranks, by node, by local rank
  // Every node holds local_size ranks; else `counts` says what each holds ("node1: 2, node2: 1").
  bool uniform = true;
  std::string counts;
  // The fewest and the most ranks on a node. The allreduce cuts each piece into `carriers`
  // shares, carried across nodes by the local ranks below `carriers` on every node (on nodes
  // with more ranks, the others only reduce and gather inside the node).
  int carriers = 1;
  int most = 1;
};
NodeLayout plan_layout(const std::vector<std::string>& host_of_rank, int rank);

// The collectives the hierarchy serves, and the links its shares cross between nodes.
enum class Collective { kAllreduce, kReduceScatter, kAllgather };
enum class LinkBackend { kMpi, kTcp };

// How the peers on different nodes move a collective's shares (above).
enum class PeerSchedule { kRelay, kDirect, kRing };
// Up to how many nodes reduce_scatter and allgather exchange directly: measured at the link limit
// on 3 and 4 (docs/benchmarks.md); beyond, each rank would send to every other node at once.
inline constexpr int kDirectNodes = 4;
PeerSchedule peer_schedule(const NodeLayout& layout, Collective op);
// The ranks on other nodes this rank exchanges with under some collective's schedule, each once:
// 2 to 3 per node on 2 nodes (the relay's neighbours), every peer up to kDirectNodes, else the
// ring's 2. The relation is symmetric (the TCP backend connects to exactly these).
std::vector<int> link_peers(const NodeLayout& layout);

// hierarchy_above()'s "not at all".
inline constexpr std::size_t kNever = std::numeric_limits<std::size_t>::max();
// Above how many bytes `op` takes the hierarchy (as sent: every rank's block for reduce_scatter
// and allgather), kNever for not at all: kFlat never; kHierarchical at every size; kAuto on
// nodes that all hold the same number of ranks, as measured at 1 Gbit/s (docs/benchmarks.md,
// "Across nodes"):
//   allreduce on 2 or 3 nodes, where some node holds more than one rank (with one rank per node
//     on 2 there is nothing to reduce first and the exchange is the flat one): MPI above 4 KiB
//     (at 4 KiB its recursive doubling is a few microseconds faster; at 16-64 KiB it sends 2 S
//     across each node's link to the hierarchy's S and takes twice as long), TCP at every size
//     (its ring is slower still);
//   allreduce on more nodes, and on nodes of different sizes (the ring among peers): MPI above
//     64 KiB (below, its recursive doubling and Rabenseifner take fewer steps than the ring's
//     2 (N - 1) rounds; from 256 KiB 1.1-2.0 x faster than MPI_Allreduce), TCP above 4 KiB
//     (below, recursive doubling) where some node holds several ranks, on more than kDirectNodes
//     nodes above 256 KiB (8 x 2, two runs, quiet and loaded: the TCP backend's own allreduce
//     took 0.28-0.78 x the ring's time from 16 to 256 KiB, its 14 rounds each a wake-up of a
//     process on a busy core; from 1 MiB the ring is 1.07-1.11 x faster); with one rank per node
//     never on TCP, whose own ring, waiting on its sockets, did as well or better (8 x 1 at
//     1 Gbit/s: 0.96 x the ring's time at 16-64 MiB, 0.25-0.93 x from 16 to 256 KiB; 16 x 1:
//     0.88-0.91 x from 4 MiB);
//   reduce_scatter and allgather, with several ranks per node: MPI above 4 KiB on up to
//     kDirectNodes, above 64 KiB on the ring (8 x 2, quiet machine: 0.51-0.67 x MPI at 16-64 KiB,
//     2.6-4.7 x from 256 KiB), TCP at every size
//     (each node sends (N - 1) / N of S where a flat ring sends (p - 1) / p across each
//     boundary; 1.8-5.2 x MPI from 16 KiB on 2 x 2); with one rank per node the direct exchange
//     or the ring sends what a ring sends: MPI above 32 KiB on up to kDirectNodes (up to 16 KiB
//     its messages to every peer at once took 1.3-2.9 x MPI's own; from 64 KiB 1.0-5.0 x
//     faster, MPI's reduce_scatter being far off the link from 4 MiB) and above 512 KiB on the
//     ring (8 x 1: 0.7 x MPI at 64-256 KiB, 1.5-4.5 x from 1 MiB), TCP never (its ring ties it).
std::size_t hierarchy_above(AllreduceAlgo algo, LinkBackend backend, const NodeLayout& layout,
                            Collective op);
// Whether to set the hierarchy up at all: some collective takes it at some size
// (hierarchy_above). kHierarchical forces it (one node or one rank per node included), and
// throws Error (kInvalid) naming the node counts when the nodes differ.
bool hierarchy_wanted(AllreduceAlgo algo, LinkBackend backend, const NodeLayout& layout);
// This rank's vote on the path: 2 forced, 1 chosen (kAuto with shared memory allowed, `shm`, and
// hierarchy_wanted), 0 flat. The communicator reduces the votes by their minimum, so that every
// rank takes the same path; throws as hierarchy_wanted.
int hierarchy_vote(AllreduceAlgo algo, bool shm, LinkBackend backend, const NodeLayout& layout);
// The algorithm an agreed vote (1 or 2) stands for, as Hierarchy takes it.
inline AllreduceAlgo voted_algo(int vote) {
  return vote == 2 ? AllreduceAlgo::kHierarchical : AllreduceAlgo::kAuto;
}

// Moves one piece's shares between peers. Messages between two ranks arrive in the order they
// were posted. Called from one thread.
class PeerTransport {
 public:
  virtual ~PeerTransport() = default;
  // Start sending `bytes` from `buf` to rank `peer` / receiving them from `peer` into `buf`, as
  // part of exchange `slot` (0 <= slot < Hierarchy::kDepth).
  virtual void send(int slot, const void* buf, std::size_t bytes, int peer) = 0;
  virtual void recv(int slot, void* buf, std::size_t bytes, int peer) = 0;
  // Moves what it can; true once every message of `slot` is complete.
  virtual bool done(int slot) = 0;
  // The peers whose message into `slot` has not arrived.
  virtual std::vector<int> waiting(int slot) const = 0;
  // Moves what it can without waiting, for every slot: the node's shared-memory waits call it,
  // so that the pieces on the network keep moving meanwhile.
  virtual void progress() {}
};

class Hierarchy {
 public:
  static constexpr int kDepth = 8;
  // Mid-sized messages go in smaller pieces, down to this, so that they too fill the pipeline
  // (piece_elems).
  static constexpr std::size_t kMinPieceBytes = std::size_t{128} << 10;
  // The node's ShmAllreduce's piece size: 4 x the single-node one, so that the node's ranks,
  // which share cores with the TCP stack and each other, meet 4 x less often per byte.
  static constexpr std::size_t kPieceBytes = std::size_t{1} << 20;

  // `node` reduces among layout.node_ranks (its rank = layout.local_rank), in pieces of any
  // size (kPieceBytes in libdtrain; the unit tests use the default too); `poll` is called
  // while waiting and may throw to abandon the call. Both must outlive this object.
  // `algo`: as the ranks agreed (voted_algo); with `backend`, which collectives take the
  // hierarchy from which size (hierarchy_above).
  Hierarchy(NodeLayout layout, AllreduceAlgo algo, LinkBackend backend, ShmAllreduce& node,
            PeerTransport& net, std::function<void()> poll);

  // Whether `op` of `bytes` (as sent; every rank's block for reduce_scatter and allgather) takes
  // the hierarchy; and whether it does at some size.
  bool takes(Collective op, std::size_t bytes) const {
    return bytes > above_[static_cast<std::size_t>(op)];
  }
  bool carries(Collective op) const { return above_[static_cast<std::size_t>(op)] != kNever; }
  // The size above which `op` takes the hierarchy (hierarchy_above), kNever for not at all.
  std::size_t above(Collective op) const { return above_[static_cast<std::size_t>(op)]; }

  // As Communicator's calls (communicator.hpp), for every rank of the layout (nodes x
  // local_size, numbered as the layout's ranks); every rank calls them with the same count, type
  // and op; kAvg sums.
  void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op);
  void reduce_scatter(const void* in, void* out, std::size_t count, DType type, ReduceOp op);
  // `bytes` per rank.
  void allgather(const void* in, void* out, std::size_t bytes);

  // Elements per piece for a message of `count` elements of `elem` bytes, with pieces of at most
  // `piece_bytes`: about 2 x kDepth pieces, none under kMinPieceBytes nor over piece_bytes. The
  // first piece's way there and the last piece's way back are what the pipeline cannot hide: a
  // 1 MiB message as one piece crosses the link twice in a row on 2 nodes (the relay), and as 8
  // pieces its halves overlap.
  // `least`: the smallest piece worth sending (kMinPieceBytes; the ring's is larger,
  // ring_piece_bytes).
  static std::size_t piece_elems(std::size_t count, std::size_t elem, std::size_t piece_bytes,
                                 std::size_t least = kMinPieceBytes);
  // The ring's smallest piece: each of its 2 (N - 1) rounds sends a segment of a piece's share,
  // piece / (local ranks x nodes), and a round costs every rank of the ring a wake-up, so small
  // segments spend more time in rounds than on the link (4 x 2 at 1 Gbit/s: 1 MiB took 3.2 x
  // the limit in 16 KiB segments). Pieces hold kRingSegmentBytes per segment, up to the node's
  // piece size.
  static constexpr std::size_t kRingSegmentBytes = std::size_t{64} << 10;
  std::size_t ring_piece_bytes() const;

  // While a call waits: the ranks it waits for and why; "" when it does not wait.
  std::string missing_ranks() const;
  // The same ranks as numbers: this node's ranks not yet in the call, else the peers whose share
  // has not arrived (as last looked at); empty when it does not wait.
  std::vector<int> missing() const;
  // The ranks of this node not yet in the call, read afresh from their counters.
  std::vector<int> missing_on_node() const;

 private:
  // A piece on the network: allreduce, its place in `out`; reduce_scatter, its place in this
  // rank's block; allgather, its offset in rank 0's block. n elements.
  struct Flight {
    char* out;
    std::size_t n;
  };
  // Cell `cell` of `slot` (direct and relay: one per node, for the share that arrives from it).
  char* scratch(int slot, int cell);
  // Lays the scratch out as `cells` cells of at least `bytes` per slot, growing it if needed; at
  // the start of a call, when no piece is in flight.
  void use_scratch(int cells, std::size_t bytes);
  // The pairing (above): the local rank on node `to` that local rank `local` of node `from` sends
  // its share for `to` to, and the one on node `from` that local rank `local` of node `at`
  // receives from.
  int sends_to(int from, int local) const;
  int receives_from(int local, int from) const;
  // The rank whose block local rank `local` of this node carries for node `j`: a reduce_scatter's
  // block it sends there (`outgoing`), an allgather's block it receives from there; its own on
  // its own node.
  int carried_block(int local, int j, bool outgoing) const;
  // The piece's layout for the node's shared memory: every local rank's carried blocks, by local
  // rank then node, elements [a, a + n) of each, block b at `base` + b * stride; into slices_.
  void lay_out_blocks(const char* in, char* out, std::size_t stride, std::size_t a, std::size_t n,
                      bool outgoing);
  // Elements of each block per piece for blocks of `count` elements of `elem` bytes.
  std::size_t block_piece(std::size_t count, std::size_t elem, Collective op) const;

  // Starts piece `k`'s messages (its node sum is in flights_).
  void post(std::size_t k, std::size_t elem);
  // Relay, node 1: combines and sends on the pieces whose share from node 0 has arrived, up to
  // `posted`; with `wait`, waits for each of them.
  void relay(std::size_t posted, bool wait, DType type, ReduceOp op);
  // Waits for piece `k`'s messages, combines the nodes' sums and shares the result in the node.
  void finish(std::size_t k, DType type, ReduceOp op);
  void wait_network(int slot);
  // reduce_scatter: the node's reduction of piece `k` (its blocks from `in`, `elem` bytes each)
  // into this rank's staging and its messages out; then, waited for, the nodes' sums combined.
  void scatter_post(std::size_t k, const char* in, std::size_t count, DType type, ReduceOp op);
  void scatter_finish(std::size_t k, DType type, ReduceOp op);
  // allgather: piece `k`'s messages (own block at `own`, `bytes` per rank); then, waited for,
  // the node's shares gathered.
  void gather_post(std::size_t k, const char* own, std::size_t bytes);
  void gather_finish(std::size_t k, std::size_t bytes);

  // The ring among peers: piece `k`'s ring over `segments` (by node; elements of `elem` bytes)
  // starts on its slot; each round then moves every piece on the network one step, in the order
  // the pieces started, waiting for each: so every rank posts its messages in the same order,
  // which both transports need (a pair's messages match in the order they were posted, whatever
  // their slot). `scratch`: where a reduce-scatter step receives before it reduces.
  enum class RingKind { kAllreduce, kReduceScatter, kAllgather };
  struct Segment {
    char* data;
    std::size_t count;
  };
  struct RingFlight {
    std::vector<Segment> segments;
    RingKind kind = RingKind::kAllreduce;
    int step = 0;
    int steps = 0;  // 0: no ring on this slot
    std::size_t elem = 1;
    char* scratch = nullptr;
  };
  void ring_start(int slot, RingKind kind, std::size_t elem, char* scratch);
  void ring_post(int slot);
  void ring_round(DType type, ReduceOp op);
  // Rounds until the ring on `slot` is complete.
  void ring_finish(int slot, DType type, ReduceOp op);
  RingStep ring_step_of(const RingFlight& ring) const;
  bool ring(Collective op) const {
    return schedule_[static_cast<std::size_t>(op)] == PeerSchedule::kRing;
  }

  NodeLayout layout_;
  std::array<std::size_t, 3> above_;      // hierarchy_above, by Collective
  std::array<PeerSchedule, 3> schedule_;  // peer_schedule, by Collective
  RingFlight rings_[kDepth];
  std::vector<int> ring_order_;  // the slots with a ring, in the order their pieces started
  bool relay_;                   // 2 nodes of several ranks: one-way pairs (above)
  std::size_t relayed_ = 0;      // relay, node 1: pieces of this call whose result went out
  ShmAllreduce& node_;
  PeerTransport& net_;
  std::function<void()> poll_;
  // kDepth x cells_ cells of cell_ bytes for the shares that arrive (and reduce_scatter's
  // staging): grown to the largest call so far (use_scratch); direct and relay at most kDepth x
  // nodes (at most kDirectNodes, or 2 on 2 nodes) x the node's piece size, the ring's kDepth x 2
  // x a piece: so the memory does not grow with the nodes. Never initialised, so only the bytes
  // calls reach are ever touched.
  std::unique_ptr<char[]> scratch_;
  std::size_t capacity_ = 0;
  int cells_ = 0;
  std::size_t cell_ = 0;
  std::vector<ShmAllreduce::Slice> slices_;     // lay_out_blocks'; kept to allocate once
  std::size_t piece_n_ = 0;                     // reduce_scatter, allgather: elements per piece
  std::atomic<const char*> call_{"allreduce"};  // the running call's name, for missing_ranks()
  Flight flights_[kDepth] = {};
  // What a stuck wait waits for, for missing_ranks() on the thread reporting a timeout.
  mutable std::mutex waiting_mutex_;
  std::vector<int> waiting_;
};

}  // namespace dtrain::runtime
