#include "comm/hierarchical_allreduce.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "comm/reduce.hpp"

namespace dtrain::runtime {
namespace {

// Tests between yields of the core while waiting on the network: the peers' processes and the
// kernel's TCP work share the cores with this one.
constexpr unsigned kTestsBeforeYield = 64;
// How often a network wait refreshes the peers it names for missing_ranks().
constexpr unsigned kTestsPerSnapshot = 256;

std::string join_ranks(const std::vector<int>& ranks) {
  std::string text;
  for (int r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text;
}

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
  for (std::size_t n = 0; n < members.size(); ++n) {
    if (static_cast<int>(members[n].size()) != layout.local_size) layout.uniform = false;
    layout.counts += (n == 0 ? "" : ", ") + names[n] + ": " + std::to_string(members[n].size());
    if (layout.local_rank < static_cast<int>(members[n].size())) {
      layout.peers.push_back(members[n][static_cast<std::size_t>(layout.local_rank)]);
    }
  }
  return layout;
}

bool hierarchy_wanted(AllreduceAlgo algo, const NodeLayout& layout) {
  switch (algo) {
    case AllreduceAlgo::kFlat:
      return false;
    case AllreduceAlgo::kAuto:
      return layout.uniform && layout.local_size > 1 && layout.nodes > 1 && layout.nodes <= 3;
    case AllreduceAlgo::kHierarchical:
      if (!layout.uniform) {
        throw Error(
            Error::Code::kInvalid,
            "dtrain: DTRAIN_ALGO=hierarchical: the nodes hold different numbers of ranks (" +
                layout.counts + "); expected the same number on every node (or DTRAIN_ALGO=flat)");
      }
      return true;
  }
  return false;
}

bool hierarchy_pays(AllreduceAlgo algo, std::size_t bytes) {
  return algo == AllreduceAlgo::kHierarchical || bytes > kHierarchyMinBytes;
}

int hierarchy_vote(AllreduceAlgo algo, bool shm, const NodeLayout& layout) {
  if (algo == AllreduceAlgo::kHierarchical) return hierarchy_wanted(algo, layout) ? 2 : 0;
  return shm && hierarchy_wanted(algo, layout) ? 1 : 0;
}

HierarchicalAllreduce::HierarchicalAllreduce(NodeLayout layout, ShmAllreduce& node,
                                             PeerTransport& net, std::function<void()> poll)
    : layout_(std::move(layout)),
      relay_(layout_.nodes == 2 && layout_.local_size > 1),
      node_(node),
      net_(net),
      poll_(std::move(poll)),
      scratch_(static_cast<std::size_t>(kDepth) * static_cast<std::size_t>(layout_.nodes) *
               node.piece_bytes()) {}

char* HierarchicalAllreduce::scratch(int slot, int node) {
  return scratch_.data() +
         (static_cast<std::size_t>(slot) * static_cast<std::size_t>(layout_.nodes) +
          static_cast<std::size_t>(node)) *
             node_.piece_bytes();
}

void HierarchicalAllreduce::allreduce(const void* in, void* out, std::size_t count, DType type,
                                      ReduceOp op) {
  const std::size_t elem = dtype_size(type);
  const std::size_t per_piece = piece_elems(count, elem, node_.piece_bytes());
  const std::size_t pieces = (count + per_piece - 1) / per_piece;
  relayed_ = 0;
  // The same schedule on every rank of the node, so their shared-memory steps pair up: piece k's
  // reduction follows the finish of piece k - kDepth.
  for (std::size_t k = 0; k < pieces; ++k) {
    if (k >= kDepth) finish(k - kDepth, type, op);
    const std::size_t first = k * per_piece;
    const std::size_t n = std::min(per_piece, count - first);
    char* piece_out = static_cast<char*>(out) + first * elem;
    node_.reduce_scatter_piece(static_cast<const char*>(in) + first * elem, piece_out, n, type, op);
    // Relay, node 1: the result sent from this slot kDepth pieces ago may still be going out; the
    // slot's next done() waits for it too.
    flights_[k % kDepth] = {piece_out, n};
    post(k, elem);
    if (relay_ && layout_.node == 1) relay(k + 1, false, type, op);
  }
  for (std::size_t k = pieces > kDepth ? pieces - kDepth : 0; k < pieces; ++k) finish(k, type, op);
  for (int slot = 0; slot < kDepth; ++slot) wait_network(slot);  // the last results sent
}

std::size_t HierarchicalAllreduce::piece_elems(std::size_t count, std::size_t elem,
                                               std::size_t piece_bytes) {
  const std::size_t pieces = 2 * static_cast<std::size_t>(kDepth);
  const std::size_t wanted = (count * elem + pieces - 1) / pieces;
  const std::size_t bytes = std::clamp(wanted, std::min(kMinPieceBytes, piece_bytes), piece_bytes);
  return std::max<std::size_t>(1, bytes / elem);
}

void HierarchicalAllreduce::post(std::size_t k, std::size_t elem) {
  const int slot = static_cast<int>(k % kDepth);
  const Flight& f = flights_[slot];
  const int l = layout_.local_rank;
  const int size = layout_.local_size;
  const ShmAllreduce::Range own = ShmAllreduce::share_of(f.n, elem, l, size);
  const auto at = [&](const ShmAllreduce::Range& r) { return f.out + r.first * elem; };
  if (relay_) {
    const std::vector<int>& other = layout_.ranks[static_cast<std::size_t>(1 - layout_.node)];
    if (layout_.node == 0) {
      // Out: this share to its owner on node 1; in: the result of share l - 1, from its owner.
      const int from = (l + size - 1) % size;
      const ShmAllreduce::Range theirs = ShmAllreduce::share_of(f.n, elem, from, size);
      if (own.count > 0) net_.send(slot, at(own), own.count * elem, other[l]);
      if (theirs.count > 0) {
        net_.recv(slot, at(theirs), theirs.count * elem, other[static_cast<std::size_t>(from)]);
      }
    } else if (own.count > 0) {
      net_.recv(slot, scratch(slot, 0), own.count * elem, other[static_cast<std::size_t>(l)]);
    }
    return;
  }
  if (own.count == 0) return;
  for (int j = 0; j < layout_.nodes; ++j) {
    if (j == layout_.node) continue;
    const int peer = layout_.peers[static_cast<std::size_t>(j)];
    net_.send(slot, at(own), own.count * elem, peer);
    net_.recv(slot, scratch(slot, j), own.count * elem, peer);
  }
}

void HierarchicalAllreduce::relay(std::size_t posted, bool wait, DType type, ReduceOp op) {
  const std::size_t elem = dtype_size(type);
  const int l = layout_.local_rank;
  const int size = layout_.local_size;
  while (relayed_ < posted) {
    const int slot = static_cast<int>(relayed_ % kDepth);
    if (wait) {
      wait_network(slot);
    } else if (!net_.done(slot)) {
      return;
    }
    const Flight& f = flights_[slot];
    const ShmAllreduce::Range own = ShmAllreduce::share_of(f.n, elem, l, size);
    if (own.count > 0) {
      char* dst = f.out + own.first * elem;
      reduce_to(dst, scratch(slot, 0), dst, own.count, type, op);  // node 0's first
      const int to = layout_.ranks[0][static_cast<std::size_t>((l + 1) % size)];
      net_.send(slot, dst, own.count * elem, to);
    }
    ++relayed_;
  }
}

void HierarchicalAllreduce::finish(std::size_t k, DType type, ReduceOp op) {
  const int slot = static_cast<int>(k % kDepth);
  const Flight& f = flights_[slot];
  if (relay_) {
    if (layout_.node == 1) {
      relay(k + 1, true, type, op);
      node_.gather_piece(f.out, f.n, type);
    } else {
      wait_network(slot);
      // Local rank l holds the result of share l - 1.
      node_.gather_piece(f.out, f.n, type, layout_.local_size - 1);
    }
    return;
  }
  const std::size_t elem = dtype_size(type);
  const ShmAllreduce::Range own =
      ShmAllreduce::share_of(f.n, elem, layout_.local_rank, layout_.local_size);
  wait_network(slot);
  if (own.count > 0 && layout_.nodes > 1) {
    // The nodes' sums in node order, this node's too, whatever this rank's node is.
    char* dst = f.out + own.first * elem;
    std::memcpy(scratch(slot, layout_.node), dst, own.count * elem);
    reduce_to(dst, scratch(slot, 0), scratch(slot, 1), own.count, type, op);
    for (int j = 2; j < layout_.nodes; ++j) {
      reduce_to(dst, dst, scratch(slot, j), own.count, type, op);
    }
  }
  node_.gather_piece(f.out, f.n, type);
}

void HierarchicalAllreduce::wait_network(int slot) {
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

std::vector<int> HierarchicalAllreduce::missing_on_node() const {
  std::vector<int> ranks;
  for (int r : node_.missing()) ranks.push_back(layout_.node_ranks[static_cast<std::size_t>(r)]);
  return ranks;
}

std::vector<int> HierarchicalAllreduce::missing() const {
  std::vector<int> ranks = missing_on_node();
  if (!ranks.empty()) return ranks;
  const std::lock_guard<std::mutex> lock(waiting_mutex_);
  return waiting_;
}

std::string HierarchicalAllreduce::missing_ranks() const {
  const std::vector<int> local = missing_on_node();
  if (!local.empty()) return join_ranks(local) + " (on this node, not yet in this allreduce)";
  const std::lock_guard<std::mutex> lock(waiting_mutex_);
  if (waiting_.empty()) return "";
  return join_ranks(waiting_) + " (on other nodes; their share of this allreduce has not arrived)";
}

}  // namespace dtrain::runtime
