// The rank map as `dtrain plan` prints it for a large job: runs of nodes that hold their ranks by
// one rule ("nodes 0-9999: ranks 4n..4n+3 (0-39999), local ranks 0-3") instead of a line per
// rank, so a 10,000-node job reads in a line. Pure.
#pragma once

#include <string>
#include <vector>

#include "plan/launch_plan.hpp"

namespace dtrain::plan {

// Nodes first_node..last_node, each holding `count` consecutive ranks from stride * n + offset
// (n the node) as local ranks 0..count-1. A node whose ranks do not follow that shape (not
// consecutive, or local ranks out of order) is a range of its own with `ranks` listed.
struct NodeRange {
  int first_node = 0;
  int last_node = 0;
  int stride = 0;
  int offset = 0;
  int count = 0;
  std::vector<int> ranks;  // only for an irregular node: its ranks, by local rank
};

// `ranks` in any order; nodes without ranks are left out (they start a new range).
std::vector<NodeRange> node_ranges(const std::vector<RankEntry>& ranks);

// One line per range, e.g. "nodes 0-9999: ranks 4n..4n+3 (0-39999), local ranks 0-3\n",
// "node 7: ranks 28-31, local ranks 0-3\n", "node 2: ranks 5, 9, 11 (local ranks 0-2)\n".
std::string format_node_ranges(const std::vector<NodeRange>& ranges);

}  // namespace dtrain::plan
