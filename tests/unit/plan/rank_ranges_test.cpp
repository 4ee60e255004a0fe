// The rank map of a large job as ranges of nodes (dtrain plan beyond 64 ranks).
#include "plan/rank_ranges.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace dtrain::plan {
namespace {

std::vector<RankEntry> block(int nodes, int per_node) {
  std::vector<RankEntry> ranks;
  for (int n = 0; n < nodes; ++n) {
    for (int l = 0; l < per_node; ++l) ranks.push_back({n * per_node + l, n, l, ""});
  }
  return ranks;
}

TEST(RankRanges, TenThousandNodesOfFourRanksAreOneLine) {
  const auto ranges = node_ranges(block(10000, 4));
  ASSERT_EQ(1u, ranges.size());
  EXPECT_EQ(0, ranges[0].first_node);
  EXPECT_EQ(9999, ranges[0].last_node);
  EXPECT_EQ(4, ranges[0].stride);
  EXPECT_EQ(0, ranges[0].offset);
  EXPECT_EQ("nodes 0-9999: ranks 4n..4n+3 (0-39999), local ranks 0-3\n",
            format_node_ranges(ranges));
}

TEST(RankRanges, OneRankPerNodeAndOneNode) {
  EXPECT_EQ("nodes 0-99: rank n (0-99), local rank 0\n",
            format_node_ranges(node_ranges(block(100, 1))));
  EXPECT_EQ("node 0: ranks 0-7, local ranks 0-7\n", format_node_ranges(node_ranges(block(1, 8))));
  EXPECT_EQ("node 0: rank 0, local rank 0\n", format_node_ranges(node_ranges(block(1, 1))));
}

TEST(RankRanges, EntriesInAnyOrderGiveTheSameRanges) {
  auto ranks = block(50, 2);
  std::reverse(ranks.begin(), ranks.end());
  EXPECT_EQ("nodes 0-49: ranks 2n..2n+1 (0-99), local ranks 0-1\n",
            format_node_ranges(node_ranges(ranks)));
}

TEST(RankRanges, ARuleBreakStartsANewRange) {
  // Nodes 0-2 hold 4 ranks each, node 3 holds 2, nodes 4-5 hold 4 again from rank 14.
  std::vector<RankEntry> ranks = block(3, 4);
  ranks.push_back({12, 3, 0, ""});
  ranks.push_back({13, 3, 1, ""});
  for (int n = 4; n < 6; ++n) {
    for (int l = 0; l < 4; ++l) ranks.push_back({14 + (n - 4) * 4 + l, n, l, ""});
  }
  EXPECT_EQ(
      "nodes 0-2: ranks 4n..4n+3 (0-11), local ranks 0-3\n"
      "node 3: ranks 12-13, local ranks 0-1\n"
      "nodes 4-5: ranks 4n-2..4n+1 (14-21), local ranks 0-3\n",
      format_node_ranges(node_ranges(ranks)));
}

TEST(RankRanges, AGapInNodesOrAStrideWithGapsInRanks) {
  std::vector<RankEntry> ranks = {{0, 0, 0, ""}, {1, 0, 1, ""}, {2, 2, 0, ""}, {3, 2, 1, ""}};
  EXPECT_EQ(
      "node 0: ranks 0-1, local ranks 0-1\n"
      "node 2: ranks 2-3, local ranks 0-1\n",
      format_node_ranges(node_ranges(ranks)));
  ranks = {{0, 0, 0, ""}, {8, 1, 0, ""}, {16, 2, 0, ""}};
  EXPECT_EQ("nodes 0-2: rank 8n (0-16), local rank 0\n", format_node_ranges(node_ranges(ranks)));
}

TEST(RankRanges, ANodeWhoseRanksAreNotConsecutiveIsListed) {
  std::vector<RankEntry> ranks = {{0, 0, 0, ""}, {2, 0, 1, ""}, {1, 1, 0, ""}, {3, 1, 1, ""}};
  EXPECT_EQ(
      "node 0: ranks 0, 2 (local ranks 0-1)\n"
      "node 1: ranks 1, 3 (local ranks 0-1)\n",
      format_node_ranges(node_ranges(ranks)));
}

TEST(RankRanges, NoRanksNoLines) { EXPECT_EQ("", format_node_ranges(node_ranges({}))); }

}  // namespace
}  // namespace dtrain::plan
