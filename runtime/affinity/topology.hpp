// A node's shape as a plain value: what the planner and the launch adapters need to know about the
// machine (how many cores to place ranks on). Loaded from hwloc, live or from an lstopo XML export;
// this header does not expose hwloc, so its users need not include hwloc.h.
#pragma once

#include <stdexcept>
#include <string>

namespace dtrain::affinity {

struct NodeSummary {
  int packages = 0;
  int numa_domains = 0;
  int cores = 0;
  int pus = 0;
  bool is_this_machine = false;  // false for an XML file: never bind the real machine from it
};

class TopologyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

NodeSummary load_live_topology();
NodeSummary load_topology_xml(const std::string& path);

}  // namespace dtrain::affinity
