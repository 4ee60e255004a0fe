#include "affinity/rank_env.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace dtrain::affinity {
namespace {

using testing::fixture;

TEST(RankEnv, PolarisRankZero) {
  const Node& node = fixture("polaris-like-4xa100.xml");
  const auto map = solve(node, 4, {});
  const launch::Environment env = rank_environment(node, map, 0);
  const launch::Environment expected{
      {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
      {"CUDA_VISIBLE_DEVICES", "3"},
      {"DTRAIN_CPUSET", "0-7,32-39"},
      {"DTRAIN_GPUS", "3"},
      {"DTRAIN_LOCAL_RANK", "0"},
      {"DTRAIN_LOCAL_SIZE", "4"},
      {"DTRAIN_NICS", "mlx5_0"},
      {"NCCL_IB_HCA", "=mlx5_0"},  // exact match: "mlx5_0" alone would also pick mlx5_0x...
      {"UCX_NET_DEVICES", "mlx5_0:1"},
  };
  EXPECT_EQ(env, expected);
}

TEST(RankEnv, OwnFirstKeepsAllGpusVisible) {
  const Node& node = fixture("polaris-like-4xa100.xml");
  Policy policy;
  policy.gpu_visibility = GpuVisibility::kOwnFirst;
  const auto map = solve(node, 4, policy);
  const launch::Environment env = rank_environment(node, map, 1);
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "2,0,1,3");
  EXPECT_EQ(env.at("DTRAIN_GPUS"), "2");
}

TEST(RankEnv, InheritedVisibleDevicesAreMappedThrough) {
  // The scheduler granted node GPUs 1 and 2 and numbered them 0,1 inside a device cgroup (or
  // left 1,2, or used UUIDs): the rank's relative index picks the entry it left.
  const Node& node = fixture("polaris-like-4xa100.xml");
  Restriction grant;
  grant.gpus = std::vector<int>{1, 2};
  const auto map = solve(node, 2, {}, grant);
  RankEnvInputs in;
  in.inherited_visible_devices = std::vector<std::string>{"GPU-aaaa", "GPU-bbbb"};
  EXPECT_EQ(rank_environment(node, map, 0, in).at("CUDA_VISIBLE_DEVICES"), "GPU-bbbb");
  EXPECT_EQ(rank_environment(node, map, 0).at("CUDA_VISIBLE_DEVICES"), "1");
  EXPECT_EQ(rank_environment(node, map, 0).at("DTRAIN_GPUS"), "1");
  // A list of another length says nothing about this grant: relative indices are written.
  in.inherited_visible_devices = std::vector<std::string>{"0", "1", "2"};
  EXPECT_EQ(rank_environment(node, map, 0, in).at("CUDA_VISIBLE_DEVICES"), "1");
}

TEST(RankEnv, NicVariablesByKind) {
  // Slingshot: its interface for NCCL's sockets, nothing for verbs.
  const Node& tioga = fixture("tioga-cray-ex235a-8xmi250x.xml");
  const auto t = rank_environment(tioga, solve(tioga, 8, {}), 0);
  EXPECT_EQ(t.at("NCCL_SOCKET_IFNAME"), "=hsi2");
  EXPECT_EQ(t.at("GLOO_SOCKET_IFNAME"), "hsi2");
  EXPECT_EQ(t.count("NCCL_IB_HCA"), 0U);
  EXPECT_EQ(t.count("UCX_NET_DEVICES"), 0U);
  EXPECT_EQ(t.at("CUDA_VISIBLE_DEVICES"), "4");
  // Omni-Path goes through verbs like InfiniBand; no GPUs: CUDA variables untouched.
  const Node& quartz = fixture("quartz-nogpu.xml");
  const auto q = rank_environment(quartz, solve(quartz, 2, {}), 1);
  EXPECT_EQ(q.at("NCCL_IB_HCA"), "=hfi1_0");
  EXPECT_EQ(q.count("GLOO_SOCKET_IFNAME"), 0U);
  EXPECT_EQ(q.at("UCX_NET_DEVICES"), "hfi1_0:1");
  EXPECT_EQ(q.count("CUDA_VISIBLE_DEVICES"), 0U);
  EXPECT_EQ(q.count("CUDA_DEVICE_ORDER"), 0U);
  EXPECT_EQ(q.at("DTRAIN_GPUS"), "");
  EXPECT_EQ(q.at("DTRAIN_CPUSET"), "18-35");
  // A node with only Ethernet: it is used, through sockets and UCX.
  Node eth = load_node_synthetic("package:1 core:4 pu:1");
  Nic nic;
  nic.name = nic.netdev = "eth0";
  nic.locality = eth.all_pus();
  eth.nics.push_back(nic);
  const auto e = rank_environment(eth, solve(eth, 1, {}), 0);
  EXPECT_EQ(e.at("NCCL_SOCKET_IFNAME"), "=eth0");
  EXPECT_EQ(e.at("GLOO_SOCKET_IFNAME"), "eth0");
  EXPECT_EQ(e.at("UCX_NET_DEVICES"), "eth0");
  // nic: all lists every fabric NIC.
  Policy all;
  all.nic = NicPolicy::kAll;
  const Node& lassen = fixture("lassen-power9-4xv100.xml");
  EXPECT_EQ(rank_environment(lassen, solve(lassen, 4, all), 0).at("NCCL_IB_HCA"),
            "=mlx5_0,mlx5_1,mlx5_2,mlx5_3");
  Policy none;
  none.nic = NicPolicy::kNone;
  none.gpu = GpuPolicy::kNone;
  const auto n = rank_environment(lassen, solve(lassen, 4, none), 0);
  EXPECT_EQ(n.count("NCCL_IB_HCA"), 0U);
  EXPECT_EQ(n.count("CUDA_VISIBLE_DEVICES"), 0U);
  EXPECT_EQ(n.at("DTRAIN_NICS"), "");
}

TEST(RankEnv, LocalRankOutOfRange) {
  const Node& node = fixture("pascal-2xp100.xml");
  EXPECT_THROW(rank_environment(node, solve(node, 2, {}), 2), PolicyError);
}

}  // namespace
}  // namespace dtrain::affinity
