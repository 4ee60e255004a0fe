// The pure choice of the host collectives' path (comm/router.hpp's route) from the facts each
// backend gives: shared memory on one node, recursive doubling, halving, the ring and the hierarchy
// by size and layout, for the MPI and TCP thresholds. The set-up ladder and the paths run for real
// are router_test.cpp's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "comm/algorithms/log_step_allgather.hpp"
#include "comm/router.hpp"
#include "hierarchy_ranks.hpp"

namespace {

using dtrain::runtime::AllreduceAlgo;
using dtrain::runtime::Collective;
using dtrain::runtime::hierarchy_above;
using dtrain::runtime::hierarchy_vote;
using dtrain::runtime::LinkBackend;
using dtrain::runtime::Path;
using dtrain::runtime::path_name;
using dtrain::runtime::route;
using dtrain::runtime::RouteFacts;
using dtrain::test::k2x2;
using dtrain::test::k4x1;
using dtrain::test::plan_layout;

constexpr std::size_t kKiB = 1024;

// The facts a backend gives the router for `hosts` as rank 0 sees them, with the hierarchy set
// up where the ranks' vote wants it.
RouteFacts facts_for(const std::vector<std::string>& hosts, LinkBackend backend, bool shm) {
  RouteFacts f;
  f.size = static_cast<int>(hosts.size());
  const bool one_node = std::all_of(hosts.begin(), hosts.end(),
                                    [&](const std::string& h) { return h == hosts.front(); });
  f.across_nodes = !one_node;
  f.shared_memory = one_node && shm;
  if (f.across_nodes) f.halving_up_to = dtrain::runtime::halving_up_to(backend);
  f.log_step_allgather_up_to = dtrain::runtime::log_step_allgather_up_to(backend);
  if (f.shared_memory) return f;
  const auto layout = plan_layout(hosts, 0);
  const int vote = hierarchy_vote(AllreduceAlgo::kAuto, shm, backend, layout);
  if (vote == 0) return f;
  for (Collective op :
       {Collective::kAllreduce, Collective::kReduceScatter, Collective::kAllgather}) {
    f.hierarchy_above[static_cast<std::size_t>(op)] =
        hierarchy_above(dtrain::runtime::voted_algo(vote), backend, layout, op);
  }
  return f;
}

TEST(Route, OneNodeWithSharedMemoryTakesItForEveryAllreduceOnly) {
  const std::vector<std::string> one = {"n1", "n1", "n1"};
  for (LinkBackend b : {LinkBackend::kMpi, LinkBackend::kTcp}) {
    const RouteFacts f = facts_for(one, b, true);
    EXPECT_EQ(route(f, Collective::kAllreduce, 4), Path::kSharedMemory);
    EXPECT_EQ(route(f, Collective::kAllreduce, 64 << 20), Path::kSharedMemory);
    // reduce_scatter and allgather have no shared-memory path of their own.
    EXPECT_EQ(route(f, Collective::kReduceScatter, 4 * kKiB), Path::kFlat);
    EXPECT_EQ(route(f, Collective::kAllgather, 64 << 20), Path::kFlat);
  }
}

TEST(Route, OneNodeWithoutSharedMemoryDoublesUpTo64KiB) {
  const std::vector<std::string> one = {"n1", "n1", "n1"};
  const RouteFacts f = facts_for(one, LinkBackend::kTcp, false);
  EXPECT_EQ(route(f, Collective::kAllreduce, 64 * kKiB), Path::kDoubling);
  EXPECT_EQ(route(f, Collective::kAllreduce, 64 * kKiB + 4), Path::kFlat);
}

TEST(Route, TwoNodesOfTwoByBackend) {
  const RouteFacts mpi = facts_for(k2x2, LinkBackend::kMpi, true);
  const RouteFacts tcp = facts_for(k2x2, LinkBackend::kTcp, true);
  // MPI: the hierarchy above 4 KiB, recursive doubling up to it (across nodes).
  EXPECT_EQ(route(mpi, Collective::kAllreduce, 4 * kKiB), Path::kDoubling);
  EXPECT_EQ(route(mpi, Collective::kAllreduce, 4 * kKiB + 4), Path::kHierarchy);
  EXPECT_EQ(route(mpi, Collective::kReduceScatter, 4 * kKiB), Path::kFlat);
  EXPECT_EQ(route(mpi, Collective::kReduceScatter, 16 * kKiB), Path::kHierarchy);
  // TCP: the allreduce as on MPI; reduce_scatter and allgather through the hierarchy at every
  // size (its flat ring is slower still).
  EXPECT_EQ(route(tcp, Collective::kAllreduce, 4 * kKiB), Path::kDoubling);
  EXPECT_EQ(route(tcp, Collective::kAllreduce, 4 * kKiB + 4), Path::kHierarchy);
  EXPECT_EQ(route(tcp, Collective::kAllgather, 16), Path::kHierarchy);
}

TEST(Route, OnMoreNodesOrOneRankPerNodeSmallAllreducesDoubleAndLargeOnesTakeTheRing) {
  std::vector<std::string> five_by_two;
  for (int r = 0; r < 10; ++r) five_by_two.push_back("n" + std::to_string(r / 2));
  for (const auto& hosts : {k4x1, five_by_two}) {
    for (LinkBackend b : {LinkBackend::kMpi, LinkBackend::kTcp}) {
      const RouteFacts f = facts_for(hosts, b, true);
      EXPECT_EQ(route(f, Collective::kAllreduce, 4 * kKiB), Path::kDoubling);
      // TCP with one rank per node: its own ring.
      const bool own_ring = b == LinkBackend::kTcp && hosts.size() == 4;
      EXPECT_EQ(route(f, Collective::kAllreduce, 1 << 20),
                own_ring ? Path::kFlat : Path::kHierarchy);
    }
  }
  // With one rank per node MPI's direct exchange pays above 32 KiB; TCP's ring ties it.
  EXPECT_EQ(route(facts_for(k4x1, LinkBackend::kMpi, true), Collective::kReduceScatter, 1 << 20),
            Path::kHierarchy);
  EXPECT_EQ(route(facts_for(k4x1, LinkBackend::kTcp, true), Collective::kReduceScatter, 1 << 20),
            Path::kFlat);
}

TEST(Route, ReduceScatterAndAllgatherAcrossNodesTakeTheRingWhereTheHierarchyDoesNot) {
  const std::vector<std::string> uneven = {"n1", "n1", "n1", "n2", "n2"};
  for (LinkBackend b : {LinkBackend::kMpi, LinkBackend::kTcp}) {
    const RouteFacts f = facts_for(uneven, b, true);
    for (Collective op : {Collective::kReduceScatter, Collective::kAllgather}) {
      EXPECT_EQ(route(f, op, 2 << 20), Path::kRing);
      EXPECT_EQ(route(f, op, 1 << 20), Path::kFlat);
    }
    // One node: the backend's own (MPI's shared-memory transport, the TCP ring).
    EXPECT_EQ(route(facts_for({"n1", "n1", "n1"}, b, false), Collective::kReduceScatter, 64 << 20),
              Path::kFlat);
  }
  EXPECT_EQ(path_name(Path::kRing), "ring");
}

TEST(Route, SmallAllgathersOnTcpTakeLogStepsWhereTheAlternativeIsARing) {
  constexpr std::size_t kUpTo = dtrain::runtime::kLogStepAllgatherUpTo;
  const std::vector<std::string> uneven = {"n1", "n1", "n1", "n2", "n2"};
  const std::vector<std::string> one = {"n1", "n1", "n1"};
  // No hierarchy (one rank per node, uneven nodes, one node): the alternative is the TCP ring,
  // which carries the same bytes.
  for (const auto& hosts : {k4x1, uneven, one}) {
    SCOPED_TRACE(std::to_string(hosts.size()) + " ranks");
    const RouteFacts tcp = facts_for(hosts, LinkBackend::kTcp, true);
    EXPECT_EQ(route(tcp, Collective::kAllgather, 24), Path::kLogSteps);
    EXPECT_EQ(route(tcp, Collective::kAllgather, kUpTo), Path::kLogSteps);
    EXPECT_NE(route(tcp, Collective::kAllgather, kUpTo + 1), Path::kLogSteps);
    // An allgather's only; MPI's own allgather makes that choice itself.
    EXPECT_NE(route(tcp, Collective::kReduceScatter, 24), Path::kLogSteps);
    EXPECT_NE(route(facts_for(hosts, LinkBackend::kMpi, true), Collective::kAllgather, 24),
              Path::kLogSteps);
  }
  // Among more nodes than the hierarchy reaches directly, while the steps saved are worth more
  // than the extra bytes on each node's link (log_step_allgather_up_to), then the hierarchy.
  for (const int nodes : {8, 64, 256}) {
    SCOPED_TRACE(std::to_string(nodes) + " nodes of 4");
    std::vector<std::string> hosts;
    for (int r = 0; r < nodes * 4; ++r) hosts.push_back("n" + std::to_string(r / 4));
    const RouteFacts tcp = facts_for(hosts, LinkBackend::kTcp, true);
    const std::size_t up_to = dtrain::runtime::log_step_allgather_up_to(nodes, 4);
    EXPECT_EQ(route(tcp, Collective::kAllgather, up_to), Path::kLogSteps);
    EXPECT_EQ(route(tcp, Collective::kAllgather, up_to + 1), Path::kHierarchy);
    EXPECT_NE(route(facts_for(hosts, LinkBackend::kMpi, true), Collective::kAllgather, 24),
              Path::kLogSteps);
  }
  // A split's agreement at 1,024 ranks (24 bytes a rank) on 256 nodes of 4 goes in 10 steps.
  EXPECT_GE(dtrain::runtime::log_step_allgather_up_to(256, 4), std::size_t{24} * 1024);
  // On 2 x 2 the hierarchy's direct exchange (one step) at every size.
  EXPECT_EQ(route(facts_for(k2x2, LinkBackend::kTcp, true), Collective::kAllgather, 24),
            Path::kHierarchy);
  EXPECT_EQ(path_name(Path::kLogSteps), "log-step allgather");
}

TEST(Route, TwoRanksAlwaysDouble) {
  RouteFacts f;
  f.size = 2;
  f.across_nodes = true;
  EXPECT_EQ(route(f, Collective::kAllreduce, 256 << 20), Path::kDoubling);
  EXPECT_EQ(path_name(Path::kDoubling), "recursive doubling");
}

}  // namespace
