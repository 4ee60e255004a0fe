// The hang watch's test situation shared by the node-reach and decision tests: six ranks on three
// nodes waiting in one allreduce, and the probes' view of node2's link cut.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/node_reach.hpp"

namespace dtrain::report::testing {

inline constexpr std::int64_t kT0 = 1'700'000'000'000'000;  // microseconds since the epoch
inline constexpr std::int64_t kSecond = 1'000'000;

// Ranks 0-5 on node1..node3 (2 each), all in allreduce #12 since kT0.
inline std::vector<RankWait> six_waiting() {
  std::vector<RankWait> waits;
  for (int r = 0; r < 6; ++r) {
    waits.push_back({r, "node" + std::to_string(r / 2 + 1), 12, "allreduce", 4096, kT0 + r});
  }
  return waits;
}

// node2 cut: node1 and node3 reach each other, not node2; node2 reaches nobody.
inline std::vector<NodeReach> node2_cut() {
  return {{"node1", {"node3"}, {"node2"}},
          {"node2", {}, {"node1", "node3"}},
          {"node3", {"node1"}, {"node2"}}};
}

}  // namespace dtrain::report::testing
