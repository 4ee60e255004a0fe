// Which node's link is cut (report/node_reach.hpp): the probe's line, the node no other reaches,
// and the verdict's words.
#include "report/node_reach.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "watch_waits.hpp"

namespace {

using dtrain::report::NodeReach;
using dtrain::report::RankWait;

using dtrain::report::testing::kSecond;
using dtrain::report::testing::kT0;
using dtrain::report::testing::node2_cut;
using dtrain::report::testing::six_waiting;

TEST(NodeReach, AReachLineReadsBackAndAHalfLineDoesNot) {
  const NodeReach r{"node1", {"node3", "node4"}, {"node2"}};
  const std::string line = dtrain::report::format_reach(r);
  EXPECT_EQ(line, "reach host=node1 answered=node3,node4 silent=node2\n");
  const auto back = dtrain::report::parse_reach(line);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->host, "node1");
  EXPECT_EQ(back->answered, (std::vector<std::string>{"node3", "node4"}));
  EXPECT_EQ(back->silent, (std::vector<std::string>{"node2"}));
  const auto none = dtrain::report::parse_reach("reach host=node2 answered= silent=node1,node3");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->answered.empty());
  EXPECT_FALSE(dtrain::report::parse_reach("reach host=node1 answered=node3"));
  EXPECT_FALSE(dtrain::report::parse_reach("wait rank=0"));
  EXPECT_FALSE(dtrain::report::parse_reach(""));
}

TEST(NodeReach, TheNodeNoOtherReachesWhileTheyReachEachOtherIsCut) {
  const std::vector<std::string> hosts = {"node1", "node2", "node3"};
  EXPECT_EQ(dtrain::report::cut_node(hosts, node2_cut()), "node2");
  // The cut node's own record is not needed (it may be down).
  auto without = node2_cut();
  without.erase(without.begin() + 1);
  EXPECT_EQ(dtrain::report::cut_node(hosts, without), "node2");
  // node1 cut, named alike.
  EXPECT_EQ(dtrain::report::cut_node(hosts, {{"node1", {}, {"node2", "node3"}},
                                             {"node2", {"node3"}, {"node1"}},
                                             {"node3", {"node2"}, {"node1"}}}),
            "node1");
}

TEST(NodeReach, TwoNodesOrRecordsThatPointAtNoSingleNodeNameNone) {
  // 2 nodes: each misses the other; which side is cut cannot be told.
  EXPECT_FALSE(dtrain::report::cut_node({"node1", "node2"},
                                        {{"node1", {}, {"node2"}}, {"node2", {}, {"node1"}}}));
  const std::vector<std::string> hosts = {"node1", "node2", "node3"};
  // Every probe timed out (a switch down, a firewall dropping the probe).
  EXPECT_FALSE(dtrain::report::cut_node(hosts, {{"node1", {}, {"node2", "node3"}},
                                                {"node2", {}, {"node1", "node3"}},
                                                {"node3", {}, {"node1", "node2"}}}));
  // Everyone answers everyone: the links are fine (a stuck transport).
  EXPECT_FALSE(dtrain::report::cut_node(hosts, {{"node1", {"node2", "node3"}, {}},
                                                {"node2", {"node1", "node3"}, {}},
                                                {"node3", {"node1", "node2"}, {}}}));
  // A node other than the cut one wrote nothing yet: not decided.
  auto missing = node2_cut();
  missing.pop_back();
  EXPECT_FALSE(dtrain::report::cut_node(hosts, missing));
  // node1 and node3 do not reach each other either: not one node's link.
  EXPECT_FALSE(dtrain::report::cut_node(hosts, {{"node1", {}, {"node2", "node3"}},
                                                {"node2", {}, {"node1", "node3"}},
                                                {"node3", {}, {"node1", "node2"}}}));
}

TEST(NodeReach, TheVerdictNamesTheNodeItsRanksAndWhatTheOthersWaitIn) {
  EXPECT_EQ(dtrain::report::cut_node_verdict(six_waiting(), node2_cut(), kT0 + 11 * kSecond),
            "dtrain: hang: node node2 (ranks 2-3) stopped answering: nodes node1, node3 cannot "
            "reach it and reach each other (it reaches none of them: its link is cut); ranks 0-5 "
            "wait in allreduce #12 of 4096 bytes for 11 s");
  // The nodes in reading order, whichever rank published first.
  std::vector<RankWait> reversed = six_waiting();
  std::reverse(reversed.begin(), reversed.end());
  EXPECT_EQ(dtrain::report::cut_node_verdict(reversed, node2_cut(), kT0 + 11 * kSecond),
            dtrain::report::cut_node_verdict(six_waiting(), node2_cut(), kT0 + 11 * kSecond));
  auto without = node2_cut();
  without.erase(without.begin() + 1);
  EXPECT_EQ(dtrain::report::cut_node_verdict(six_waiting(), without, kT0 + 11 * kSecond),
            "dtrain: hang: node node2 (ranks 2-3) stopped answering: nodes node1, node3 cannot "
            "reach it and reach each other (it wrote no answer of its own: its link is cut, or it "
            "is down); ranks 0-5 wait in allreduce #12 of 4096 bytes for 11 s");
  // 2 nodes: no verdict of this kind (all_waiting_verdict's words stand).
  std::vector<RankWait> two = six_waiting();
  two.resize(4);
  EXPECT_FALSE(dtrain::report::cut_node_verdict(
      two, {{"node1", {}, {"node2"}}, {"node2", {}, {"node1"}}}, kT0 + 11 * kSecond));
}

TEST(NodeReach, TheAbortEndsTheCutNodesRanksAndSaysTheOtherSidesRankIsNotAtFault) {
  // On node2, the node cut off: its own ranks end.
  EXPECT_EQ(dtrain::report::cut_node_abort(six_waiting(), "node2", 2, "node2"),
            "ending ranks 2-3 on node2, the node cut off");
  // On node1: the lowest rank ends too, so that its side stops waiting, and is said not at fault.
  EXPECT_EQ(dtrain::report::cut_node_abort(six_waiting(), "node2", 0, "node1"),
            "ending ranks 2-3 on node2 (their loggers there) and rank 0 on node1, not at fault: "
            "the ranks on this side of the cut would not learn of node2's end");
}

TEST(NodeReach, ManyNodesAreCountedNotListed) {
  std::vector<RankWait> waits;
  std::vector<NodeReach> reach;
  for (int n = 0; n < 64; ++n) {
    const std::string host = "n" + std::to_string(n);
    waits.push_back({n, host, 7, "allreduce", 8, kT0});
    NodeReach r{host, {}, {}};
    for (int m = 0; m < 64; ++m) {
      if (m == n) continue;
      (m == 5 || n == 5 ? r.silent : r.answered).push_back("n" + std::to_string(m));
    }
    reach.push_back(r);
  }
  const auto v = dtrain::report::cut_node_verdict(waits, reach, kT0 + 9 * kSecond);
  ASSERT_TRUE(v);
  EXPECT_EQ(*v,
            "dtrain: hang: node n5 (rank 5) stopped answering: 63 other nodes cannot reach it and "
            "reach each other (it reaches none of them: its link is cut); ranks 0-63 wait in "
            "allreduce #7 of 8 bytes for 9 s");
}

}  // namespace
