// The hierarchy's pure parts (the node layout from the ranks' hosts, when the hierarchy is set up
// and taken, the shares a piece splits into) and the hierarchical allreduce with threads as ranks
// (hierarchy_ranks.hpp). Every op and dtype exact on integer-valued data, on
// 2 x 2 and 2 x 3 (the relay), 3 x 2 and 4 x 1 ranks (the direct exchange), one piece and more
// pieces than the pipeline holds, in and out of place, the same bits on every rank; a rank that
// never arrives, on this node or another, named.
#include "comm/algorithms/hierarchy.hpp"

#include <gtest/gtest.h>

#include "hierarchy_ranks.hpp"

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
using dtrain::runtime::Hierarchy;
using dtrain::runtime::hierarchy_wanted;
using dtrain::runtime::NodeLayout;
using dtrain::runtime::plan_layout;
using dtrain::runtime::ShmAllreduce;
using dtrain::test::expected;
using dtrain::test::k2x2;
using dtrain::test::k2x3;
using dtrain::test::k3x2;
using dtrain::test::k3x3;
using dtrain::test::k4x1;
using dtrain::test::k5x2;
using dtrain::test::k8x1;
using dtrain::test::kManyPieces;
using dtrain::test::run_ranks;
using dtrain::test::value;

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

TEST(HierarchyChoice, AutoOnlyWhereItPaysByBackendLayoutAndCollective) {
  using dtrain::runtime::Collective;
  using dtrain::runtime::hierarchy_above;
  using dtrain::runtime::kNever;
  using dtrain::runtime::LinkBackend;
  constexpr std::size_t k4K = 4 << 10;
  constexpr std::size_t k32K = 32 << 10;
  struct Row {
    std::vector<std::string> hosts;
    // above: allreduce, reduce_scatter, allgather; MPI then TCP
    std::size_t mpi[3];
    std::size_t tcp[3];
  };
  // The ring among peers takes allreduces on 3 nodes and more (with one rank per node on MPI
  // only); reduce_scatter and allgather with one rank per node beyond kDirectNodes from 512 KiB.
  constexpr std::size_t ring_mpi = 64 << 10;
  constexpr std::size_t k512K = 512 << 10;
  constexpr std::size_t k256K = 256 << 10;
  const std::vector<Row> rows = {
      {{"a", "a", "b", "b"}, {k4K, k4K, k4K}, {k4K, 0, 0}},                             // 2 x 2
      {{"a", "a", "b", "b", "c", "c"}, {ring_mpi, k4K, k4K}, {k4K, 0, 0}},              // 3 x 2
      {{"a", "a", "b", "b", "c", "c", "d", "d"}, {ring_mpi, k4K, k4K}, {k4K, 0, 0}},    // 4 x 2
      {{"a", "b", "c", "d"}, {ring_mpi, k32K, k32K}, {kNever, kNever, kNever}},         // 4 x 1
      {{"a", "b"}, {kNever, k32K, k32K}, {kNever, kNever, kNever}},                     // 2 x 1
      {{"a", "a", "a", "a"}, {kNever, kNever, kNever}, {kNever, kNever, kNever}},       // one node
      {{"a", "b", "c", "d", "e"}, {ring_mpi, k512K, k512K}, {kNever, kNever, kNever}},  // 5 x 1
      // 5 x 2: reduce_scatter and allgather on the ring from 64 KiB on MPI; the allreduce's ring
      // on TCP from 256 KiB beyond kDirectNodes.
      {{"a", "a", "b", "b", "c", "c", "d", "d", "e", "e"},
       {ring_mpi, ring_mpi, ring_mpi},
       {k256K, 0, 0}},
      // Uneven: the allreduce (direct on 2 nodes, the ring on more); the others flat.
      {{"a", "a", "b"}, {k4K, kNever, kNever}, {k4K, kNever, kNever}},
      {{"a", "a", "a", "b", "b", "c", "c"}, {ring_mpi, kNever, kNever}, {k4K, kNever, kNever}},
  };
  const Collective ops[3] = {Collective::kAllreduce, Collective::kReduceScatter,
                             Collective::kAllgather};
  for (const Row& row : rows) {
    const NodeLayout layout = plan_layout(row.hosts, 0);
    for (int i = 0; i < 3; ++i) {
      SCOPED_TRACE(layout.counts + ", collective " + std::to_string(i));
      EXPECT_EQ(hierarchy_above(AllreduceAlgo::kAuto, LinkBackend::kMpi, layout, ops[i]),
                row.mpi[i]);
      EXPECT_EQ(hierarchy_above(AllreduceAlgo::kAuto, LinkBackend::kTcp, layout, ops[i]),
                row.tcp[i]);
      EXPECT_EQ(hierarchy_above(AllreduceAlgo::kFlat, LinkBackend::kMpi, layout, ops[i]), kNever);
    }
    const bool any_mpi = row.mpi[0] != kNever || row.mpi[1] != kNever;
    const bool any_tcp = row.tcp[0] != kNever || row.tcp[1] != kNever;
    EXPECT_EQ(hierarchy_wanted(AllreduceAlgo::kAuto, LinkBackend::kMpi, layout), any_mpi)
        << layout.counts;
    EXPECT_EQ(hierarchy_wanted(AllreduceAlgo::kAuto, LinkBackend::kTcp, layout), any_tcp)
        << layout.counts;
  }
  // Forced: every collective at every size, one node and one rank per node included.
  for (const auto& hosts : {std::vector<std::string>{"a", "b"}, {"a", "a"}}) {
    const NodeLayout layout = plan_layout(hosts, 0);
    EXPECT_TRUE(hierarchy_wanted(AllreduceAlgo::kHierarchical, LinkBackend::kTcp, layout));
    for (const Collective op : ops) {
      EXPECT_EQ(hierarchy_above(AllreduceAlgo::kHierarchical, LinkBackend::kTcp, layout, op), 0u);
    }
  }
  EXPECT_FALSE(hierarchy_wanted(AllreduceAlgo::kFlat, LinkBackend::kMpi,
                                plan_layout({"a", "a", "b", "b"}, 0)));
}

TEST(HierarchyChoice, PeersExchangeDirectlyOnFewNodesAndRoundARingOnMore) {
  using dtrain::runtime::Collective;
  using dtrain::runtime::link_peers;
  using dtrain::runtime::peer_schedule;
  using dtrain::runtime::PeerSchedule;
  const NodeLayout two = plan_layout({"a", "a", "a", "b", "b", "b"}, 1);
  EXPECT_EQ(peer_schedule(two, Collective::kAllreduce), PeerSchedule::kRelay);
  EXPECT_EQ(link_peers(two), (std::vector<int>{3, 4, 5}));  // local ranks 0, 1, 2 of node b
  const NodeLayout four = plan_layout({"a", "b", "c", "d"}, 0);
  EXPECT_EQ(peer_schedule(four, Collective::kAllreduce), PeerSchedule::kRing);
  EXPECT_EQ(peer_schedule(four, Collective::kReduceScatter), PeerSchedule::kDirect);
  EXPECT_EQ(link_peers(four), (std::vector<int>{1, 3, 2}));  // the ring's, then the direct's
  // 64 nodes x 2: local rank 1 of node 5 talks to local rank 1 of nodes 4 and 6 only.
  std::vector<std::string> hosts;
  for (int i = 0; i < 128; ++i) hosts.push_back("n" + std::to_string(i / 2));
  const NodeLayout many = plan_layout(hosts, 11);
  for (const Collective op :
       {Collective::kAllreduce, Collective::kReduceScatter, Collective::kAllgather}) {
    EXPECT_EQ(peer_schedule(many, op), PeerSchedule::kRing);
  }
  EXPECT_EQ(link_peers(many), (std::vector<int>{9, 13}));
}

TEST(HierarchicalAllreduce, MidSizedMessagesGoInSmallerPiecesToFillThePipeline) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  const auto piece = [](std::size_t bytes, std::size_t elem = 4) {
    return Hierarchy::piece_elems(bytes / elem, elem, kMiB) * elem;
  };
  EXPECT_EQ(piece(64 * kMiB), kMiB);     // 64 pieces of the most
  EXPECT_EQ(piece(16 * kMiB), kMiB);     // 16
  EXPECT_EQ(piece(4 * kMiB), kMiB / 4);  // 16 of 256 KiB
  EXPECT_EQ(piece(kMiB), kMiB / 8);      // 8 of the least, 128 KiB
  EXPECT_EQ(piece(64 << 10), kMiB / 8);  // one piece
  EXPECT_EQ(piece(3 * kMiB, 8), 3 * kMiB / 16);
  EXPECT_EQ(Hierarchy::piece_elems(3, 8, kMiB), std::size_t{16384});
  EXPECT_EQ(Hierarchy::piece_elems(1000, 4, 4096), std::size_t{1024});  // at most
}

TEST(HierarchyChoice, ForcedOnUnevenNodesTakesTheAllreduceOnly) {
  using dtrain::runtime::Collective;
  using dtrain::runtime::hierarchy_above;
  using dtrain::runtime::kNever;
  using dtrain::runtime::LinkBackend;
  const NodeLayout l = plan_layout({"n1", "n1", "n1", "n2", "n2", "n3", "n3"}, 4);
  EXPECT_FALSE(l.uniform);
  EXPECT_EQ(l.carriers, 2);
  EXPECT_EQ(l.most, 3);
  EXPECT_TRUE(hierarchy_wanted(AllreduceAlgo::kHierarchical, LinkBackend::kMpi, l));
  EXPECT_EQ(
      hierarchy_above(AllreduceAlgo::kHierarchical, LinkBackend::kMpi, l, Collective::kAllreduce),
      0u);
  EXPECT_EQ(hierarchy_above(AllreduceAlgo::kHierarchical, LinkBackend::kMpi, l,
                            Collective::kReduceScatter),
            kNever);
  // Local rank 2 of node n1 carries nothing across nodes.
  EXPECT_TRUE(dtrain::runtime::link_peers(plan_layout({"n1", "n1", "n1", "n2", "n2"}, 2)).empty());
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

template <typename T>
void check_exact(const std::vector<std::string>& hosts, DType type, std::size_t n, bool in_place) {
  const int p = static_cast<int>(hosts.size());
  std::vector<std::vector<T>> results(static_cast<std::size_t>(p));
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct}) {
    run_ranks(hosts, nullptr, [&](int r, Hierarchy& hier) {
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

TEST(HierarchicalAllreduce, ExactOnRingsOfThreeFiveAndEightNodes) {
  check_exact<float>(k5x2, DType::kFloat32, kManyPieces, false);
  check_exact<std::int64_t>(k5x2, DType::kInt64, 65537, true);
  check_exact<std::uint8_t>(k5x2, DType::kUInt8, 7, true);  // most segments empty
  check_exact<double>(k3x3, DType::kFloat64, kManyPieces / 2 + 3, true);
  check_exact<float>(k8x1, DType::kFloat32, kManyPieces, true);
  check_exact<std::int32_t>(k8x1, DType::kInt32, 1, false);
}

TEST(HierarchicalAllreduce, ExactOnNodesOfDifferentSizes) {
  // As a scheduler may place 7 ranks on 3 nodes, or 5 on 2: the local ranks below the smallest
  // node's count carry the shares; the others reduce and gather inside their node.
  const std::vector<std::string> k322 = {"n1", "n1", "n1", "n2", "n2", "n3", "n3"};
  const std::vector<std::string> k32 = {"n1", "n2", "n1", "n2", "n1"};
  const std::vector<std::string> k21111 = {"n1", "n1", "n2", "n3", "n4", "n5"};
  check_exact<float>(k322, DType::kFloat32, kManyPieces, false);
  check_exact<std::int32_t>(k322, DType::kInt32, 65537, true);
  check_exact<double>(k32, DType::kFloat64, kManyPieces / 2 + 5, true);
  check_exact<std::uint8_t>(k32, DType::kUInt8, 9, false);
  check_exact<float>(k21111, DType::kFloat32, 300001, true);
}

TEST(HierarchicalAllreduce, TheRingGivesEveryRankTheSameBitsOfInexactSums) {
  // Values whose sums round: each segment is reduced once along the ring and then only copied,
  // so every rank holds the same bits (the order differs from segment to segment).
  const std::size_t n = kManyPieces;
  std::vector<std::vector<float>> out(k5x2.size());
  run_ranks(k5x2, nullptr, [&](int r, Hierarchy& hier) {
    std::vector<float>& o = out[static_cast<std::size_t>(r)];
    o.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      o[i] = 1.0f / static_cast<float>((i % 97) + 3) + static_cast<float>(r) * 1e-3f;
    }
    hier.allreduce(o.data(), o.data(), n, DType::kFloat32, ReduceOp::kSum);
  });
  for (std::size_t r = 1; r < out.size(); ++r) {
    ASSERT_EQ(std::memcmp(out[0].data(), out[r].data(), n * sizeof(float)), 0) << "rank " << r;
  }
  EXPECT_NEAR(out[0][0], 10 * (1.0f / 3) + 0.045f, 1e-4);
}

TEST(HierarchicalAllreduce, OnTheRingEachRankNamesThePeerItWaitsFor) {
  // Rank 2 never arrives: its next on the ring waits for it, the others for their previous, each
  // stuck behind the gap (the backend's loss diagnosis names the rank really lost).
  dtrain::test::Deadline d;
  EXPECT_THROW(run_ranks({"n1", "n2", "n3", "n4", "n5"}, d.poll,
                         [&](int r, Hierarchy& hier) {
                           if (r == 2) return;
                           d.enter(r, hier);
                           std::vector<float> x(100000, 1.0f);
                           hier.allreduce(x.data(), x.data(), x.size(), DType::kFloat32,
                                          ReduceOp::kSum);
                         }),
               std::runtime_error);
  const std::string why = " (on other nodes; their share of this allreduce has not arrived)";
  EXPECT_EQ(d.said, (std::map<int, std::string>{
                        {0, "4" + why}, {1, "0" + why}, {3, "2" + why}, {4, "3" + why}}));
}

TEST(HierarchicalAllreduce, Uint8WrapsLikeEveryOtherPath) {
  // 4 ranks of 200: 800 mod 256 = 32.
  std::vector<std::vector<std::uint8_t>> out(4);
  run_ranks(k2x2, nullptr, [&](int r, Hierarchy& hier) {
    std::vector<std::uint8_t>& o = out[static_cast<std::size_t>(r)];
    o.assign(100000, 200);
    hier.allreduce(o.data(), o.data(), o.size(), DType::kUInt8, ReduceOp::kSum);
  });
  for (const auto& o : out) EXPECT_EQ(o, std::vector<std::uint8_t>(100000, 32));
}

TEST(HierarchicalAllreduce, NamesAPeerOnAnotherNodeThatNeverSends) {
  dtrain::test::Deadline d;
  EXPECT_THROW(run_ranks({"n1", "n2"}, d.poll,
                         [&](int r, Hierarchy& hier) {
                           if (r == 1) return;  // never arrives
                           d.enter(r, hier);
                           std::vector<float> x(100000, 1.0f);
                           hier.allreduce(x.data(), x.data(), x.size(), DType::kFloat32,
                                          ReduceOp::kSum);
                         }),
               std::runtime_error);
  EXPECT_EQ(d.said, (std::map<int, std::string>{
                        {0, "1 (on other nodes; their share of this allreduce has not arrived)"}}));
}

TEST(HierarchicalAllreduce, NamesARankOfThisNodeThatNeverArrives) {
  dtrain::test::Deadline d;
  // Ranks 0 and 2 on n1: rank 2 stays away, so rank 0 waits for it in the node's reduction.
  EXPECT_THROW(run_ranks({"n1", "n2", "n1", "n2"}, d.poll,
                         [&](int r, Hierarchy& hier) {
                           if (r != 0) return;
                           d.enter(r, hier);
                           std::vector<float> x(100000, 1.0f);
                           hier.allreduce(x.data(), x.data(), x.size(), DType::kFloat32,
                                          ReduceOp::kSum);
                         }),
               std::runtime_error);
  EXPECT_EQ(d.said,
            (std::map<int, std::string>{{0, "2 (on this node, not yet in this allreduce)"}}));
}

}  // namespace
