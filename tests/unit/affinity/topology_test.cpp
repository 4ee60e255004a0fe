#include "affinity/topology.hpp"

#include <gtest/gtest.h>

namespace dtrain::affinity {
namespace {

TEST(Topology, LoadsRealXmlExports) {
  // Counts from `hwloc-info --input FILE` (tests/fixtures/topologies/SOURCE.md).
  const NodeSummary pascal = load_topology_xml(DTRAIN_FIXTURE_DIR "/topologies/pascal-2xp100.xml");
  EXPECT_EQ(pascal.packages, 2);
  EXPECT_EQ(pascal.numa_domains, 2);
  EXPECT_EQ(pascal.cores, 36);
  EXPECT_EQ(pascal.pus, 72);
  EXPECT_FALSE(pascal.is_this_machine);
  const NodeSummary quartz = load_topology_xml(DTRAIN_FIXTURE_DIR "/topologies/quartz-nogpu.xml");
  EXPECT_EQ(quartz.cores, 36);
  EXPECT_EQ(quartz.pus, 36);
}

TEST(Topology, LiveMachineHasCores) {
  const NodeSummary live = load_live_topology();
  EXPECT_GE(live.cores, 1);
  EXPECT_TRUE(live.is_this_machine);
}

TEST(Topology, BadFilesAreNamedInTheError) {
  try {
    load_topology_xml("/nonexistent/topo.xml");
    FAIL() << "no error";
  } catch (const TopologyError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/topo.xml"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_topology_xml(DTRAIN_FIXTURE_DIR "/topologies/SOURCE.md"), TopologyError);
}

}  // namespace
}  // namespace dtrain::affinity
