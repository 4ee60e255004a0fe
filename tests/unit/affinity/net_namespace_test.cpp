#include "affinity/net_namespace.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "affinity/rank_env.hpp"
#include "fixtures.hpp"

namespace dtrain::affinity {
namespace {

using testing::fixture;

Nic ethernet(const std::string& name, const Node& node) {
  Nic n;
  n.name = n.netdev = name;
  n.locality = node.all_pus();
  return n;
}

NetInterface up(const std::string& name, bool address = true) {
  return {name, true, name == "lo", address};
}

TEST(NetNamespace, NicsOfThisNamespaceAreKept) {
  Node node = load_node_synthetic("package:1 core:4 pu:1");
  node.nics.push_back(ethernet("eth0", node));
  fit_nics_to_namespace(node, {up("lo"), up("eth0")});
  ASSERT_EQ(node.nics.size(), 1U);
  EXPECT_EQ(node.nics[0].name, "eth0");
}

TEST(NetNamespace, HostInterfacesAreReplacedByTheNamespacesOwn) {
  // hwloc read the host's /sys: eth0 on PCI. The namespace has lo, an address-less dummy and
  // its veth ens3; only ens3 can carry the rank's traffic.
  Node node = load_node_synthetic("package:2 core:2 pu:1");
  node.nics.push_back(ethernet("eth0", node));
  fit_nics_to_namespace(node, {up("lo"), up("dummy0", false), up("ens3")});
  ASSERT_EQ(node.nics.size(), 1U);
  EXPECT_EQ(node.nics[0].name, "ens3");
  EXPECT_EQ(node.nics[0].netdev, "ens3");
  EXPECT_EQ(node.nics[0].kind, NicKind::kEthernet);
  EXPECT_EQ(node.nics[0].locality, node.all_pus());
  EXPECT_EQ(node.nics[0].host_bridge, -1);
  const auto env = rank_environment(node, solve(node, 2, {}), 1);
  EXPECT_EQ(env.at("NCCL_SOCKET_IFNAME"), "=ens3");
  EXPECT_EQ(env.at("GLOO_SOCKET_IFNAME"), "ens3");
}

TEST(NetNamespace, VerbsDevicesStayWhateverTheNamespaceHas) {
  // RDMA does not go through the namespace's interfaces: Lassen's mlx5 HCAs stay.
  // Its two Broadcom Ethernet ports are not in this namespace, so they go.
  Node node = fixture("lassen-power9-4xv100.xml");
  ASSERT_EQ(node.nics.size(), 6U);
  fit_nics_to_namespace(node, {up("lo")});
  std::vector<std::string> names;
  for (const auto& n : node.nics) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}));
}

TEST(NetNamespace, NothingUsableMeansNoNic) {
  Node node = load_node_synthetic("package:1 core:2 pu:1");
  node.nics.push_back(ethernet("eth0", node));
  fit_nics_to_namespace(node, {up("lo"), {"ens3", false, false, true}});
  EXPECT_TRUE(node.nics.empty());
}

TEST(NetNamespace, ThisProcessSeesItsLoopback) {
  const auto list = namespace_interfaces();
  const bool lo =
      std::any_of(list.begin(), list.end(), [](const NetInterface& i) { return i.loopback; });
  EXPECT_TRUE(lo) << "getifaddrs listed " << list.size() << " interfaces and no loopback";
}

}  // namespace
}  // namespace dtrain::affinity
