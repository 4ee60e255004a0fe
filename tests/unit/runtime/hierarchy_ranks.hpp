// The hierarchical collectives (comm/algorithms/hierarchy.hpp) with threads as ranks: a
// ShmAllreduce per node over segments in this process's memory, and a PeerTransport of in-memory
// mailboxes that delivers each pair's messages in the order they were posted (as MPI's and the TCP
// transport's are). Shared by the allreduce's and the reduce_scatter/allgather tests.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "comm/algorithms/hierarchy.hpp"
#include "threads_as_ranks.hpp"

namespace dtrain::test {

using runtime::Hierarchy;
using runtime::NodeLayout;
using runtime::PeerTransport;
using runtime::plan_layout;
using runtime::ShmAllreduce;

// Messages between threads, delivered in the order each pair posted them (as MPI's are).
struct Mailboxes {
  std::mutex mutex;
  std::map<std::pair<int, int>, std::deque<std::vector<char>>> queues;  // (from, to)
};

class MemoryTransport final : public PeerTransport {
 public:
  MemoryTransport(int rank, Mailboxes& boxes) : rank_(rank), boxes_(boxes) {}
  void send(int slot, const void* buf, std::size_t bytes, int peer) override {
    (void)slot;
    const char* p = static_cast<const char*>(buf);
    const std::lock_guard<std::mutex> lock(boxes_.mutex);
    boxes_.queues[{rank_, peer}].emplace_back(p, p + bytes);
  }
  void recv(int slot, void* buf, std::size_t bytes, int peer) override {
    pending_.push_back({slot, buf, bytes, peer});
  }
  bool done(int slot) override {
    const std::lock_guard<std::mutex> lock(boxes_.mutex);
    bool complete = true;
    for (auto it = pending_.begin(); it != pending_.end();) {
      auto& q = boxes_.queues[{it->peer, rank_}];
      if (!q.empty()) {
        if (q.front().size() != it->bytes) throw std::logic_error("message of the wrong size");
        std::memcpy(it->recv, q.front().data(), it->bytes);
        q.pop_front();
        it = pending_.erase(it);
        continue;
      }
      if (it->slot == slot) complete = false;
      ++it;
    }
    return complete;
  }
  std::vector<int> waiting(int slot) const override {
    std::vector<int> peers;
    for (const Pending& p : pending_)
      if (p.slot == slot) peers.push_back(p.peer);
    return peers;
  }

 private:
  struct Pending {
    int slot;
    void* recv;
    std::size_t bytes;
    int peer;
  };
  int rank_;
  Mailboxes& boxes_;
  std::deque<Pending> pending_;
};

// One process's stand-in for a node's shared window: prepared, 64-byte aligned segments, for
// pieces of the size libdtrain gives the node (`piece_bytes`: the hierarchy's, or the single-node
// allreduce's).
struct Segments {
  explicit Segments(int p, std::size_t piece_bytes = Hierarchy::kPieceBytes)
      : memory(ShmAllreduce::segment_bytes(piece_bytes, p) * static_cast<std::size_t>(p) + 64) {
    const std::size_t segment = ShmAllreduce::segment_bytes(piece_bytes, p);
    char* base = memory.data() + (64 - reinterpret_cast<std::uintptr_t>(memory.data()) % 64) % 64;
    for (int r = 0; r < p; ++r) {
      pointers.push_back(base + segment * static_cast<std::size_t>(r));
      ShmAllreduce::init_segment(pointers.back());
    }
  }
  std::vector<char> memory;
  std::vector<char*> pointers;
};

// Runs body(rank, hierarchy) for every rank of `hosts` on its own thread; `poll` is given to
// each rank's hierarchy. Rethrows the first failure.
template <typename Body>
void run_ranks(const std::vector<std::string>& hosts, const std::function<void()>& poll,
               Body body) {
  const int p = static_cast<int>(hosts.size());
  std::map<std::string, std::unique_ptr<Segments>> nodes;
  for (int r = 0; r < p; ++r) {
    const NodeLayout l = plan_layout(hosts, r);
    auto& seg = nodes[hosts[static_cast<std::size_t>(r)]];
    if (!seg) seg = std::make_unique<Segments>(l.local_size);
  }
  Mailboxes boxes;
  threads_as_ranks(p, [&](int r) {
    NodeLayout l = plan_layout(hosts, r);
    ShmAllreduce node(l.local_rank, nodes[hosts[static_cast<std::size_t>(r)]]->pointers, poll,
                      Hierarchy::kPieceBytes);
    MemoryTransport net(r, boxes);
    Hierarchy hier(std::move(l), runtime::AllreduceAlgo::kHierarchical, runtime::LinkBackend::kMpi,
                   node, net, poll);
    body(r, hier);
  });
}

// Rank r's element i: small integers, so every op is exact in every type.
template <typename T>
T value(int r, std::size_t i) {
  return static_cast<T>((r + 1) * ((i % 5) + 1) % 7 + 1);
}

template <typename T>
T expected(int p, std::size_t i, dtrain::ReduceOp op) {
  T acc = value<T>(0, i);
  for (int r = 1; r < p; ++r) {
    const T v = value<T>(r, i);
    switch (op) {
      case dtrain::ReduceOp::kSum:
      case dtrain::ReduceOp::kAvg:
        acc = static_cast<T>(acc + v);
        break;
      case dtrain::ReduceOp::kMin:
        acc = v < acc ? v : acc;
        break;
      case dtrain::ReduceOp::kMax:
        acc = v > acc ? v : acc;
        break;
      case dtrain::ReduceOp::kProduct:
        acc = static_cast<T>(acc * v);
        break;
    }
  }
  return acc;
}

inline const std::vector<std::string> k2x2 = {"n1", "n1", "n2", "n2"};
inline const std::vector<std::string> k3x2 = {"n1", "n2", "n3", "n1", "n2", "n3"};  // round robin
inline const std::vector<std::string> k2x3 = {"n1", "n1", "n1", "n2", "n2", "n2"};
inline const std::vector<std::string> k4x1 = {"n1", "n2", "n3", "n4"};
// Beyond kDirectNodes every collective goes round the ring among peers.
inline const std::vector<std::string> k5x2 = {"n1", "n2", "n3", "n4", "n5",
                                              "n1", "n2", "n3", "n4", "n5"};
inline const std::vector<std::string> k3x3 = {"n1", "n1", "n1", "n2", "n2", "n2", "n3", "n3", "n3"};
inline const std::vector<std::string> k8x1 = {"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"};

// More pieces than the pipeline holds, and a last piece that is not whole.
inline constexpr std::size_t kManyPieces =
    (runtime::Hierarchy::kDepth + 3) * runtime::Hierarchy::kPieceBytes / sizeof(float) + 17;

// The poll throws after 300 ms, as the Engine's deadline does, keeping what each rank's
// missing_ranks() said.
struct Deadline {
  std::chrono::steady_clock::time_point end =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  std::mutex mutex;
  std::map<std::thread::id, std::pair<int, Hierarchy*>> ranks;
  std::map<int, std::string> said;
  std::function<void()> poll = [this] {
    if (std::chrono::steady_clock::now() < end) return;
    const std::lock_guard<std::mutex> lock(mutex);
    const auto& [rank, hier] = ranks.at(std::this_thread::get_id());
    said[rank] = hier->missing_ranks();
    throw std::runtime_error("deadline");
  };
  void enter(int rank, Hierarchy& hier) {
    const std::lock_guard<std::mutex> lock(mutex);
    ranks[std::this_thread::get_id()] = {rank, &hier};
  }
};

}  // namespace dtrain::test
