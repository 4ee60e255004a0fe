// The JSON schema of docs/affinity.md, as `dtrain topo --json` prints it.
#include "affinity/report.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fixtures.hpp"

namespace dtrain::affinity {
namespace {

using testing::fixture;

TEST(Report, TopologyJsonSchema) {
  const Node& node = fixture("pascal-2xp100.xml");
  const auto j = topology_to_json(node, solve(node, 2, {}));
  ASSERT_TRUE(j.contains("node"));
  ASSERT_TRUE(j.contains("ranks"));
  EXPECT_EQ(j["node"]["cores"], 36);
  EXPECT_EQ(j["node"]["pus"], 72);
  EXPECT_EQ(j["node"]["numa"][0]["cpus"], "0-17,36-53");
  EXPECT_EQ(j["node"]["gpus"][1]["pci"], "0000:07:00.0");
  EXPECT_EQ(j["node"]["gpus"][1]["nic_distance"]["mlx5_0"], "same PCIe switch");
  EXPECT_EQ(j["node"]["nics"][0]["kind"], "infiniband");
  EXPECT_EQ(j["policy"]["gpu"], "closest");
  const auto& r1 = j["ranks"][1];
  EXPECT_EQ(r1["local_rank"], 1);
  EXPECT_EQ(r1["gpus"], nlohmann::json::array({1}));
  EXPECT_EQ(r1["gpu_pci"], nlohmann::json::array({"0000:07:00.0"}));
  EXPECT_EQ(r1["cpus"], "9-17,45-53");
  EXPECT_EQ(r1["numa"], 0);
  EXPECT_EQ(r1["nics"], nlohmann::json::array({"mlx5_0"}));
  // Key order is part of the contract: "node" first, the ranks last.
  EXPECT_EQ(j.begin().key(), "node");
  EXPECT_EQ(j.back(), j["ranks"]);
}

TEST(Report, TextNamesDevicesAndRanks) {
  const Node& node = fixture("polaris-like-4xa100.xml");
  const std::string text = node_to_text(node) + rank_map_to_text(node, solve(node, 4, {}));
  EXPECT_NE(text.find("# node: "), std::string::npos);
  EXPECT_NE(text.find("(1 package, 4 NUMA domains, 32 cores, 64 PUs)"), std::string::npos);
  EXPECT_NE(text.find("eno1    ethernet    0000:21:00.0  3     24-31,56-63  eno1    management"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("0     3     0000:c7:00.0  3        0     0-7,32-39    mlx5_0"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace dtrain::affinity
