// The hierarchical allreduce's pure parts (the node layout from the ranks' hosts, when the
// hierarchy is set up and taken, the shares a piece splits into) and the algorithm itself with
// threads as ranks: a ShmAllreduce per node over segments in this process's memory and a
// PeerTransport of in-memory mailboxes. Every op and dtype exact on integer-valued data, on
// 2 x 2 and 2 x 3 (the relay), 3 x 2 and 4 x 1 ranks (the direct exchange), one piece and more
// pieces than the pipeline holds, in and out of place, the same bits on every rank; a rank that
// never arrives, on this node or another, named.
#include "comm/hierarchical_allreduce.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using dtrain::DType;
using dtrain::ReduceOp;
using dtrain::runtime::AllreduceAlgo;
using dtrain::runtime::HierarchicalAllreduce;
using dtrain::runtime::hierarchy_pays;
using dtrain::runtime::hierarchy_wanted;
using dtrain::runtime::NodeLayout;
using dtrain::runtime::PeerTransport;
using dtrain::runtime::plan_layout;
using dtrain::runtime::ShmAllreduce;

TEST(NodeLayout, NodesInOrderOfTheirLowestRankPeersByLocalRank) {
  // Round-robin placement: ranks 0 and 2 on b, 1 and 3 on a.
  const std::vector<std::string> hosts = {"b", "a", "b", "a"};
  const NodeLayout l = plan_layout(hosts, 3);
  EXPECT_EQ(l.nodes, 2);
  EXPECT_EQ(l.node, 1);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.local_size, 2);
  EXPECT_EQ(l.node_ranks, (std::vector<int>{1, 3}));
  EXPECT_EQ(l.peers, (std::vector<int>{2, 3}));
  EXPECT_TRUE(l.uniform);
  EXPECT_EQ(l.counts, "b: 2, a: 2");
  const NodeLayout first = plan_layout({"n1", "n1", "n2", "n2"}, 0);
  EXPECT_EQ(first.node, 0);
  EXPECT_EQ(first.peers, (std::vector<int>{0, 2}));
}

TEST(NodeLayout, UnevenNodesAreNotUniform) {
  const NodeLayout l = plan_layout({"n1", "n1", "n2"}, 2);
  EXPECT_FALSE(l.uniform);
  EXPECT_EQ(l.counts, "n1: 2, n2: 1");
  EXPECT_EQ(l.local_rank, 0);
  EXPECT_EQ(l.peers, (std::vector<int>{0, 2}));
}

TEST(HierarchyChoice, AutoOnlyWhereItPays) {
  const auto wanted = [](const std::vector<std::string>& hosts) {
    return hierarchy_wanted(AllreduceAlgo::kAuto, plan_layout(hosts, 0));
  };
  EXPECT_TRUE(wanted({"a", "a", "b", "b"}));                       // 2 x 2
  EXPECT_TRUE(wanted({"a", "a", "b", "b", "c", "c"}));             // 3 x 2
  EXPECT_FALSE(wanted({"a", "b", "c", "d"}));                      // 4 x 1: nothing to reduce first
  EXPECT_FALSE(wanted({"a", "a", "a", "a"}));                      // one node: shared memory alone
  EXPECT_FALSE(wanted({"a", "a", "b", "b", "c", "c", "d", "d"}));  // 4 nodes: a ring sends less
  EXPECT_FALSE(wanted({"a", "a", "b"}));                           // uneven
  EXPECT_FALSE(hierarchy_wanted(AllreduceAlgo::kFlat, plan_layout({"a", "a", "b", "b"}, 0)));
  EXPECT_TRUE(hierarchy_wanted(AllreduceAlgo::kHierarchical, plan_layout({"a", "b"}, 0)));
  EXPECT_FALSE(hierarchy_pays(AllreduceAlgo::kAuto, 4 << 10));
  EXPECT_TRUE(hierarchy_pays(AllreduceAlgo::kAuto, (4 << 10) + 1));
  EXPECT_TRUE(hierarchy_pays(AllreduceAlgo::kHierarchical, 4));
}

TEST(HierarchicalAllreduce, MidSizedMessagesGoInSmallerPiecesToFillThePipeline) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  const auto piece = [](std::size_t bytes, std::size_t elem = 4) {
    return HierarchicalAllreduce::piece_elems(bytes / elem, elem, kMiB) * elem;
  };
  EXPECT_EQ(piece(64 * kMiB), kMiB);     // 64 pieces of the most
  EXPECT_EQ(piece(16 * kMiB), kMiB);     // 16
  EXPECT_EQ(piece(4 * kMiB), kMiB / 4);  // 16 of 256 KiB
  EXPECT_EQ(piece(kMiB), kMiB / 8);      // 8 of the least, 128 KiB
  EXPECT_EQ(piece(64 << 10), kMiB / 8);  // one piece
  EXPECT_EQ(piece(3 * kMiB, 8), 3 * kMiB / 16);
  EXPECT_EQ(HierarchicalAllreduce::piece_elems(3, 8, kMiB), std::size_t{16384});
  EXPECT_EQ(HierarchicalAllreduce::piece_elems(1000, 4, 4096), std::size_t{1024});  // at most
}

TEST(HierarchyChoice, ForcedOnUnevenNodesNamesTheCounts) {
  try {
    hierarchy_wanted(AllreduceAlgo::kHierarchical, plan_layout({"n1", "n1", "n2"}, 0));
    FAIL() << "no refusal";
  } catch (const dtrain::Error& e) {
    EXPECT_STREQ(e.what(),
                 "dtrain: DTRAIN_ALGO=hierarchical: the nodes hold different numbers of ranks "
                 "(n1: 2, n2: 1); expected the same number on every node (or DTRAIN_ALGO=flat)");
  }
}

TEST(ShareOf, SharesCoverThePieceInOrderOnCacheLineBoundaries) {
  for (std::size_t elem : {1, 2, 4, 8}) {
    for (int p : {1, 2, 3, 4}) {
      for (std::size_t n : {1, 15, 64, 1000, 65536, 65537}) {
        std::size_t next = 0;
        for (int r = 0; r < p; ++r) {
          const ShmAllreduce::Range s = ShmAllreduce::share_of(n, elem, r, p);
          EXPECT_EQ(s.first, next) << n << " " << p << " " << r;
          if (s.count > 0) {
            EXPECT_EQ(s.first * elem % 64, 0u) << n << " " << p << " " << r;
          }
          next = s.first + s.count;
        }
        EXPECT_EQ(next, n) << elem << " " << n << " " << p;
      }
    }
  }
}

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
// pieces of the size libdtrain gives the node.
struct Segments {
  static constexpr std::size_t kSegment =
      ShmAllreduce::segment_bytes(HierarchicalAllreduce::kPieceBytes);
  explicit Segments(int p) : memory(kSegment * p + 64) {
    char* base = memory.data() + (64 - reinterpret_cast<std::uintptr_t>(memory.data()) % 64) % 64;
    for (int r = 0; r < p; ++r) {
      pointers.push_back(base + kSegment * static_cast<std::size_t>(r));
      ShmAllreduce::init_segment(pointers.back(), HierarchicalAllreduce::kPieceBytes);
    }
  }
  std::vector<char> memory;
  std::vector<char*> pointers;
};

// Runs body(rank, allreduce) for every rank of `hosts` on its own thread; `poll` is given to
// each rank's allreduce. Rethrows the first failure.
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
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      try {
        NodeLayout l = plan_layout(hosts, r);
        ShmAllreduce node(l.local_rank, nodes[hosts[static_cast<std::size_t>(r)]]->pointers, poll,
                          HierarchicalAllreduce::kPieceBytes);
        MemoryTransport net(r, boxes);
        HierarchicalAllreduce hier(std::move(l), node, net, poll);
        body(r, hier);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// Rank r's element i: small integers, so every op is exact in every type.
template <typename T>
T value(int r, std::size_t i) {
  return static_cast<T>((r + 1) * ((i % 5) + 1) % 7 + 1);
}

template <typename T>
T expected(int p, std::size_t i, ReduceOp op) {
  T acc = value<T>(0, i);
  for (int r = 1; r < p; ++r) {
    const T v = value<T>(r, i);
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kAvg:
        acc = static_cast<T>(acc + v);
        break;
      case ReduceOp::kMin:
        acc = v < acc ? v : acc;
        break;
      case ReduceOp::kMax:
        acc = v > acc ? v : acc;
        break;
      case ReduceOp::kProduct:
        acc = static_cast<T>(acc * v);
        break;
    }
  }
  return acc;
}

template <typename T>
void check_exact(const std::vector<std::string>& hosts, DType type, std::size_t n, bool in_place) {
  const int p = static_cast<int>(hosts.size());
  std::vector<std::vector<T>> results(static_cast<std::size_t>(p));
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct}) {
    run_ranks(hosts, nullptr, [&](int r, HierarchicalAllreduce& hier) {
      std::vector<T> in(n);
      for (std::size_t i = 0; i < n; ++i) in[i] = value<T>(r, i);
      std::vector<T>& out = results[static_cast<std::size_t>(r)];
      out.assign(n, T{});
      if (in_place) {
        out = in;
        hier.allreduce(out.data(), out.data(), n, type, op);
      } else {
        hier.allreduce(in.data(), out.data(), n, type, op);
      }
    });
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(results[0][i], expected<T>(p, i, op))
          << "op " << static_cast<int>(op) << " element " << i << " of " << n;
    }
    for (int r = 1; r < p; ++r) {
      ASSERT_EQ(std::memcmp(results[0].data(), results[static_cast<std::size_t>(r)].data(),
                            n * sizeof(T)),
                0)
          << "rank " << r << " differs from rank 0";
    }
  }
}

const std::vector<std::string> k2x2 = {"n1", "n1", "n2", "n2"};
const std::vector<std::string> k3x2 = {"n1", "n2", "n3", "n1", "n2", "n3"};  // round robin
const std::vector<std::string> k2x3 = {"n1", "n1", "n1", "n2", "n2", "n2"};
const std::vector<std::string> k4x1 = {"n1", "n2", "n3", "n4"};

// More pieces than the pipeline holds, and a last piece that is not whole.
constexpr std::size_t kManyPieces =
    (HierarchicalAllreduce::kDepth + 3) * HierarchicalAllreduce::kPieceBytes / sizeof(float) + 17;

TEST(HierarchicalAllreduce, ExactOnTwoNodesOfTwo) {
  check_exact<float>(k2x2, DType::kFloat32, kManyPieces, false);
  check_exact<float>(k2x2, DType::kFloat32, 1000, true);
  check_exact<double>(k2x2, DType::kFloat64, 70001, true);
  check_exact<std::int32_t>(k2x2, DType::kInt32, 3, false);
  check_exact<std::int64_t>(k2x2, DType::kInt64, 100003, false);
  check_exact<std::uint8_t>(k2x2, DType::kUInt8, 300001, true);
}

TEST(HierarchicalAllreduce, ExactOnTwoNodesOfThree) {
  check_exact<float>(k2x3, DType::kFloat32, kManyPieces, false);
  check_exact<std::int32_t>(k2x3, DType::kInt32, 65537, true);
  check_exact<std::uint8_t>(k2x3, DType::kUInt8, 100, false);
}

TEST(HierarchicalAllreduce, ExactOnThreeNodesOfTwoAndFourOfOne) {
  check_exact<float>(k3x2, DType::kFloat32, kManyPieces, true);
  check_exact<std::int32_t>(k3x2, DType::kInt32, 65537, false);
  check_exact<float>(k4x1, DType::kFloat32, kManyPieces, false);
  check_exact<std::uint8_t>(k4x1, DType::kUInt8, 1001, true);
}

TEST(HierarchicalAllreduce, Uint8WrapsLikeEveryOtherPath) {
  // 4 ranks of 200: 800 mod 256 = 32.
  std::vector<std::vector<std::uint8_t>> out(4);
  run_ranks(k2x2, nullptr, [&](int r, HierarchicalAllreduce& hier) {
    std::vector<std::uint8_t>& o = out[static_cast<std::size_t>(r)];
    o.assign(100000, 200);
    hier.allreduce(o.data(), o.data(), o.size(), DType::kUInt8, ReduceOp::kSum);
  });
  for (const auto& o : out) EXPECT_EQ(o, std::vector<std::uint8_t>(100000, 32));
}

// The poll throws after `limit`, as the Engine's deadline does; before it throws, it keeps what
// the rank's missing_ranks() said.
struct Deadline {
  std::chrono::steady_clock::time_point end =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  std::mutex mutex;
  std::map<std::thread::id, HierarchicalAllreduce*> ranks;
  std::vector<std::string> said;
  std::function<void()> poll = [this] {
    if (std::chrono::steady_clock::now() < end) return;
    const std::lock_guard<std::mutex> lock(mutex);
    said.push_back(ranks.at(std::this_thread::get_id())->missing_ranks());
    throw std::runtime_error("deadline");
  };
};

TEST(HierarchicalAllreduce, NamesAPeerOnAnotherNodeThatNeverSends) {
  Deadline d;
  EXPECT_THROW(run_ranks({"n1", "n2"}, d.poll,
                         [&](int r, HierarchicalAllreduce& hier) {
                           if (r == 1) return;  // never arrives
                           {
                             const std::lock_guard<std::mutex> lock(d.mutex);
                             d.ranks[std::this_thread::get_id()] = &hier;
                           }
                           std::vector<float> x(100000, 1.0f);
                           hier.allreduce(x.data(), x.data(), x.size(), DType::kFloat32,
                                          ReduceOp::kSum);
                         }),
               std::runtime_error);
  ASSERT_EQ(d.said.size(), 1u);
  EXPECT_EQ(d.said[0], "1 (on other nodes; their share of this allreduce has not arrived)");
}

TEST(HierarchicalAllreduce, NamesARankOfThisNodeThatNeverArrives) {
  Deadline d;
  // Ranks 0 and 2 on n1: rank 2 stays away, so rank 0 waits for it in the node's reduction.
  EXPECT_THROW(run_ranks({"n1", "n2", "n1", "n2"}, d.poll,
                         [&](int r, HierarchicalAllreduce& hier) {
                           if (r != 0) return;
                           {
                             const std::lock_guard<std::mutex> lock(d.mutex);
                             d.ranks[std::this_thread::get_id()] = &hier;
                           }
                           std::vector<float> x(100000, 1.0f);
                           hier.allreduce(x.data(), x.data(), x.size(), DType::kFloat32,
                                          ReduceOp::kSum);
                         }),
               std::runtime_error);
  ASSERT_EQ(d.said.size(), 1u);
  EXPECT_EQ(d.said[0], "2 (on this node, not yet in this allreduce)");
}

}  // namespace
