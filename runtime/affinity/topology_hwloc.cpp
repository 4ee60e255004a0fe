// The only file that includes hwloc.h.
#include <hwloc.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "affinity/topology.hpp"

namespace dtrain::affinity {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

int count(hwloc_topology_t t, hwloc_obj_type_t type) {
  int n = hwloc_get_nbobjs_by_type(t, type);
  return n < 0 ? 0 : n;
}

NodeSummary load(const std::string* xml_path) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    throw TopologyError(std::string("dtrain: topology: hwloc_topology_init failed: ") +
                        std::strerror(errno));
  }
  TopologyPtr topo(raw);
  const std::string source = xml_path ? *xml_path : std::string("this machine");
  if (xml_path && hwloc_topology_set_xml(raw, xml_path->c_str()) != 0) {
    throw TopologyError("dtrain: topology: " + *xml_path +
                        ": cannot read as an hwloc XML file: " + std::strerror(errno));
  }
  if (hwloc_topology_load(raw) != 0) {
    throw TopologyError("dtrain: topology: " + source +
                        ": hwloc could not load it: " + std::strerror(errno));
  }
  NodeSummary s;
  s.packages = count(raw, HWLOC_OBJ_PACKAGE);
  s.numa_domains = count(raw, HWLOC_OBJ_NUMANODE);
  s.cores = count(raw, HWLOC_OBJ_CORE);
  s.pus = count(raw, HWLOC_OBJ_PU);
  s.is_this_machine = hwloc_topology_is_thissystem(raw) != 0;
  if (s.cores == 0 && s.pus > 0) s.cores = s.pus;  // some VMs expose PUs without cores
  if (s.cores == 0) {
    throw TopologyError("dtrain: topology: " + source +
                        ": no cores found; expected at least one core or PU");
  }
  return s;
}

}  // namespace

NodeSummary load_live_topology() { return load(nullptr); }
NodeSummary load_topology_xml(const std::string& path) { return load(&path); }

}  // namespace dtrain::affinity
