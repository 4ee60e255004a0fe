#include "comm/algorithms/hierarchy.hpp"
#include "comm/algorithms/log_step_allgather.hpp"
#include "common/words.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace dtrain::runtime {
namespace {

// Tests between yields of the core while waiting on the network: the peers' processes and the
// kernel's TCP work share the cores with this one.
constexpr unsigned kTestsBeforeYield = 64;
// How often a network wait refreshes the peers it names for missing_ranks().
constexpr unsigned kTestsPerSnapshot = 256;

}  // namespace

NodeLayout plan_layout(const std::vector<std::string>& host_of_rank, int rank) {
  std::map<std::string, int> node_of_host;
  std::vector<std::vector<int>> members;  // by node: its ranks in rank order
  std::vector<std::string> names;
  NodeLayout layout;
  for (int r = 0; r < static_cast<int>(host_of_rank.size()); ++r) {
    const std::string& host = host_of_rank[static_cast<std::size_t>(r)];
    const auto [it, added] = node_of_host.emplace(host, static_cast<int>(members.size()));
    if (added) {
      members.emplace_back();
      names.push_back(host);
    }
    members[static_cast<std::size_t>(it->second)].push_back(r);
  }
  layout.ranks = members;
  layout.nodes = static_cast<int>(members.size());
  layout.node = node_of_host.at(host_of_rank.at(static_cast<std::size_t>(rank)));
  layout.node_ranks = members[static_cast<std::size_t>(layout.node)];
  layout.local_size = static_cast<int>(layout.node_ranks.size());
  layout.local_rank =
      static_cast<int>(std::find(layout.node_ranks.begin(), layout.node_ranks.end(), rank) -
                       layout.node_ranks.begin());
  layout.carriers = layout.most = layout.local_size;
  for (std::size_t n = 0; n < members.size(); ++n) {
    const int held = static_cast<int>(members[n].size());
    if (held != layout.local_size) layout.uniform = false;
    layout.carriers = std::min(layout.carriers, held);
    layout.most = std::max(layout.most, held);
    layout.counts += (n == 0 ? "" : ", ") + names[n] + ": " + std::to_string(members[n].size());
    if (layout.local_rank < static_cast<int>(members[n].size())) {
      layout.peers.push_back(members[n][static_cast<std::size_t>(layout.local_rank)]);
    }
  }
  return layout;
}

PeerSchedule peer_schedule(const NodeLayout& layout, Collective op) {
  // The relay pairs local rank l with l + 1 on the other node: equal nodes only.
  if (layout.nodes == 2) {
    return layout.uniform && layout.local_size > 1 ? PeerSchedule::kRelay : PeerSchedule::kDirect;
  }
  if (op != Collective::kAllreduce && layout.nodes <= kDirectNodes) return PeerSchedule::kDirect;
  return layout.nodes < 2 ? PeerSchedule::kDirect : PeerSchedule::kRing;
}

std::vector<int> link_peers(const NodeLayout& layout) {
  std::vector<int> peers;
  const auto add = [&](int node, int local) {
    const auto& there = layout.ranks[static_cast<std::size_t>(node)];
    const int n = static_cast<int>(there.size());
    const int q = there[static_cast<std::size_t>((local % n + n) % n)];
    if (std::find(peers.begin(), peers.end(), q) == peers.end()) peers.push_back(q);
  };
  const int l = layout.local_rank;
  if (l >= layout.carriers) return peers;  // carries nothing across nodes
  for (const Collective op :
       {Collective::kAllreduce, Collective::kReduceScatter, Collective::kAllgather}) {
    for (int j = 0; j < layout.nodes; ++j) {
      if (j == layout.node) continue;
      switch (peer_schedule(layout, op)) {
        case PeerSchedule::kRelay:
          for (int d : {-1, 0, 1}) add(j, l + d);
          break;
        case PeerSchedule::kDirect:
          add(j, l);
          break;
        case PeerSchedule::kRing:
          if (j == (layout.node + 1) % layout.nodes ||
              j == (layout.node + layout.nodes - 1) % layout.nodes) {
            add(j, l);
          }
          break;
      }
    }
  }
  return peers;
}

std::size_t hierarchy_above(AllreduceAlgo algo, LinkBackend backend, const NodeLayout& layout,
                            Collective op) {
  constexpr std::size_t kSmall = std::size_t{4} << 10;
  constexpr std::size_t kMpiDirectSmall = std::size_t{32} << 10;
  constexpr std::size_t kMpiRingSmall = std::size_t{64} << 10;
  constexpr std::size_t kMpiOnePerNodeRingSmall = std::size_t{512} << 10;
  constexpr std::size_t kTcpManyNodesRingSmall = std::size_t{256} << 10;
  switch (algo) {
    case AllreduceAlgo::kFlat:
      return kNever;
    case AllreduceAlgo::kHierarchical:
      // reduce_scatter and allgather lay every rank's block out by local rank: equal nodes only.
      return layout.uniform || op == Collective::kAllreduce ? 0 : kNever;
    case AllreduceAlgo::kAuto:
      break;
  }
  if (layout.nodes < 2) return kNever;
  const bool mpi = backend == LinkBackend::kMpi;
  const bool ring = peer_schedule(layout, op) == PeerSchedule::kRing;
  if (op == Collective::kAllreduce) {
    // One rank per node: nothing to reduce first; the TCP backend's own ring ties the ring among
    // nodes or beats it.
    if (layout.most == 1 && (!mpi || !ring)) return kNever;
    if (ring) {
      if (mpi) return kMpiRingSmall;
      return layout.nodes > kDirectNodes ? kTcpManyNodesRingSmall : kSmall;
    }
    // Up to 4 KiB recursive doubling wins on either backend (2 x 2 TCP: 68.3 us against the
    // hierarchy's 82.4 and MPI's 70.0, docs/benchmarks.md).
    return kSmall;
  }
  if (!layout.uniform) return kNever;
  if (layout.local_size > 1) {
    if (mpi) return ring ? kMpiRingSmall : kSmall;
    // On TCP, among more nodes than kDirectNodes (the ring), small allgathers take log2(p) steps
    // (router.hpp) while the steps they save are worth more than their bytes.
    return ring && op == Collective::kAllgather
               ? log_step_allgather_up_to(layout.nodes, layout.local_size)
               : 0;
  }
  if (!mpi) return kNever;
  return ring ? kMpiOnePerNodeRingSmall : kMpiDirectSmall;
}

bool hierarchy_wanted(AllreduceAlgo algo, LinkBackend backend, const NodeLayout& layout) {
  for (const Collective op :
       {Collective::kAllreduce, Collective::kReduceScatter, Collective::kAllgather}) {
    if (hierarchy_above(algo, backend, layout, op) != kNever) return true;
  }
  return false;
}

int hierarchy_vote(AllreduceAlgo algo, bool shm, LinkBackend backend, const NodeLayout& layout) {
  if (algo == AllreduceAlgo::kHierarchical) return hierarchy_wanted(algo, backend, layout) ? 2 : 0;
  return shm && hierarchy_wanted(algo, backend, layout) ? 1 : 0;
}

Hierarchy::Hierarchy(NodeLayout layout, AllreduceAlgo algo, LinkBackend backend, ShmAllreduce& node,
                     PeerTransport& net, std::function<void()> poll)
    : layout_(std::move(layout)),
      above_{hierarchy_above(algo, backend, layout_, Collective::kAllreduce),
             hierarchy_above(algo, backend, layout_, Collective::kReduceScatter),
             hierarchy_above(algo, backend, layout_, Collective::kAllgather)},
      schedule_{peer_schedule(layout_, Collective::kAllreduce),
                peer_schedule(layout_, Collective::kReduceScatter),
                peer_schedule(layout_, Collective::kAllgather)},
      relay_(schedule_[static_cast<std::size_t>(Collective::kAllreduce)] == PeerSchedule::kRelay),
      node_(node),
      net_(net),
      poll_(std::move(poll)) {}

char* Hierarchy::scratch(int slot, int cell) {
  return scratch_.get() + (static_cast<std::size_t>(slot) * static_cast<std::size_t>(cells_) +
                           static_cast<std::size_t>(cell)) *
                              cell_;
}

void Hierarchy::use_scratch(int cells, std::size_t bytes) {
  // 64-byte cells: the reductions read them with vector loads.
  cells_ = cells;
  cell_ = (bytes + 63) / 64 * 64;
  const std::size_t need =
      static_cast<std::size_t>(kDepth) * static_cast<std::size_t>(cells) * cell_;
  if (need <= capacity_) return;
  capacity_ = need;
  scratch_ = std::make_unique_for_overwrite<char[]>(need);
}

int Hierarchy::sends_to(int from, int local) const {
  return relay_ && from == 1 ? (local + 1) % layout_.local_size : local;
}

int Hierarchy::receives_from(int local, int from) const {
  const int size = layout_.local_size;
  return relay_ && from == 1 ? (local + size - 1) % size : local;
}

void Hierarchy::wait_network(int slot) {
  for (unsigned tests = 1; !net_.done(slot); ++tests) {
    if (tests % kTestsPerSnapshot == 1) {
      std::vector<int> peers = net_.waiting(slot);
      const std::lock_guard<std::mutex> lock(waiting_mutex_);
      waiting_ = std::move(peers);
    }
    if (tests >= kTestsBeforeYield) sched_yield();
    if (poll_) poll_();
  }
  const std::lock_guard<std::mutex> lock(waiting_mutex_);
  waiting_.clear();
}

std::vector<int> Hierarchy::missing_on_node() const {
  std::vector<int> ranks;
  for (int r : node_.missing()) ranks.push_back(layout_.node_ranks[static_cast<std::size_t>(r)]);
  return ranks;
}

std::vector<int> Hierarchy::missing() const {
  std::vector<int> ranks = missing_on_node();
  if (!ranks.empty()) return ranks;
  const std::lock_guard<std::mutex> lock(waiting_mutex_);
  return waiting_;
}

std::string Hierarchy::missing_ranks() const {
  const std::vector<int> local = missing_on_node();
  if (!local.empty())
    return join_ranks(local) + " (on this node, not yet in this " + std::string(call_.load()) + ")";
  const std::lock_guard<std::mutex> lock(waiting_mutex_);
  if (waiting_.empty()) return "";
  return join_ranks(waiting_) + " (on other nodes; their share of this " +
         std::string(call_.load()) + " has not arrived)";
}

}  // namespace dtrain::runtime
