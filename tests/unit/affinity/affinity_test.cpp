// The solver on every fixture, every rank count up to twice the GPUs (or the cores), and every
// policy: the invariants of affinity.hpp (fixtures.hpp), then the concrete maps the topology
// README and the sites' own documentation predict.
#include "affinity/affinity.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace dtrain::affinity {
namespace {

using testing::all_fixtures;
using testing::check_invariants;
using testing::fixture;
using testing::rank_gpus;
using testing::rank_nics;

std::vector<Policy> all_policies() {
  std::vector<Policy> out;
  for (auto gpu : {GpuPolicy::kClosest, GpuPolicy::kIdentity, GpuPolicy::kNone}) {
    for (auto vis : {GpuVisibility::kOwn, GpuVisibility::kOwnFirst}) {
      for (auto cpu : {CpuPolicy::kNuma, CpuPolicy::kNone}) {
        for (auto nic : {NicPolicy::kClosest, NicPolicy::kAll, NicPolicy::kNone}) {
          out.push_back({gpu, vis, cpu, nic});
        }
      }
    }
  }
  return out;
}

std::vector<std::string> cpu_lists(const RankMap& map) {
  std::vector<std::string> out;
  for (const auto& r : map.ranks) out.push_back(r.cpus.to_list());
  return out;
}

std::vector<int> numas(const RankMap& map) {
  std::vector<int> out;
  for (const auto& r : map.ranks) out.push_back(r.numa);
  return out;
}

TEST(Solve, InvariantsHoldOnEveryFixtureRankCountAndPolicy) {
  for (const auto& name : all_fixtures()) {
    const Node& node = fixture(name);
    const int g = static_cast<int>(node.gpus.size());
    const int max_ranks = std::min<int>(static_cast<int>(node.cores.size()), std::max(2 * g, 8));
    for (const auto& policy : all_policies()) {
      for (int ranks = 1; ranks <= max_ranks; ++ranks) {
        const RankMap map = solve(node, ranks, policy);
        check_invariants(node, map, ranks, policy);
        if (::testing::Test::HasFailure()) return;  // one clear failure, not thousands
      }
    }
  }
}

TEST(Solve, IsDeterministic) {
  for (const auto& name : all_fixtures()) {
    const Node& node = fixture(name);
    const Node again = load_node_xml(testing::fixture_path(name));
    for (int ranks : {1, 3, 4, 7}) {
      const auto a = solve(node, std::min<int>(ranks, static_cast<int>(node.cores.size())), {});
      const auto b = solve(again, std::min<int>(ranks, static_cast<int>(node.cores.size())), {});
      ASSERT_EQ(a.ranks.size(), b.ranks.size());
      for (std::size_t r = 0; r < a.ranks.size(); ++r) {
        EXPECT_EQ(a.ranks[r].gpus, b.ranks[r].gpus);
        EXPECT_EQ(a.ranks[r].cpus, b.ranks[r].cpus);
        EXPECT_EQ(a.ranks[r].nics, b.ranks[r].nics);
      }
    }
  }
}

TEST(Solve, EachRankSitsOnTheNumaDomainOfItsGpu) {
  // The README's "closest GPU per NUMA node", read backwards: with one rank per GPU, every rank's
  // cores are in its GPU's NUMA domain (every GPU NUMA domain here has a core per GPU).
  for (const auto& name : all_fixtures()) {
    const Node& node = fixture(name);
    if (node.gpus.empty() || node.gpus.size() > node.cores.size()) continue;
    const auto map = solve(node, static_cast<int>(node.gpus.size()), {});
    for (const auto& r : map.ranks) {
      const auto& gpu = node.gpus[static_cast<std::size_t>(r.node_gpus.front())];
      EXPECT_EQ(r.numa, gpu.numa) << name << " rank " << r.local_rank;
      EXPECT_TRUE(r.cpus.is_subset_of(node.find_numa(gpu.numa)->cpus));
    }
  }
}

TEST(Solve, PolarisReversalFallsOutOfTheTopology) {
  // ALCF's set_affinity_gpu_polaris.sh: gpu = num_gpus - 1 - PMI_LOCAL_RANK, "due to topology".
  // Here nothing knows about Polaris: GPU 3 is simply the one next to cores 0-7.
  const Node& node = fixture("polaris-like-4xa100.xml");
  const auto map = solve(node, 4, {});
  for (int r = 0; r < 4; ++r) EXPECT_EQ(rank_gpus(map, r), std::vector<int>{3 - r});
  EXPECT_EQ(cpu_lists(map),
            (std::vector<std::string>{"0-7,32-39", "8-15,40-47", "16-23,48-55", "24-31,56-63"}));
  EXPECT_EQ(numas(map), (std::vector<int>{0, 1, 2, 3}));
  // Two NICs for four GPUs: each GPU with a NIC under its host bridge takes it, the two others
  // (equally far from both) are spread so each NIC carries two ranks.
  EXPECT_EQ(rank_nics(node, map, 0), std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(rank_nics(node, map, 2), std::vector<std::string>{"mlx5_1"});
  EXPECT_NE(rank_nics(node, map, 1), rank_nics(node, map, 3));
  int on_mlx5_0 = 0;
  for (int r = 0; r < 4; ++r) on_mlx5_0 += rank_nics(node, map, r).front() == "mlx5_0";
  EXPECT_EQ(on_mlx5_0, 2);
  // The management port and the BMC's VGA chip are not training devices.
  EXPECT_EQ(node.gpus.size(), 4U);
  EXPECT_EQ(candidate_nics(node).size(), 2U);
}

TEST(Solve, PolarisIdentityKeepsTorchrunsAssumption) {
  const auto map = solve(fixture("polaris-like-4xa100.xml"), 4, {GpuPolicy::kIdentity});
  for (int r = 0; r < 4; ++r) EXPECT_EQ(rank_gpus(map, r), std::vector<int>{r});
  // The cores still follow the GPU: rank 0 (GPU 0) runs next to GPU 0, on NUMA 3.
  EXPECT_EQ(numas(map), (std::vector<int>{3, 2, 1, 0}));
}

TEST(Solve, TiogaFollowsTheFrontierLayout) {
  // Closest GPU per L3/CCD 0..7 is rsmi4, rsmi5, rsmi2, rsmi3, rsmi6, rsmi7, rsmi0, rsmi1; each
  // rank's cores are exactly its GCD's CCD, and its NIC the Slingshot port on its NUMA domain.
  const Node& node = fixture("tioga-cray-ex235a-8xmi250x.xml");
  const auto map = solve(node, 8, {});
  const std::vector<int> expected{4, 5, 2, 3, 6, 7, 0, 1};
  const std::vector<std::string> nics{"hsi2", "hsi2", "hsi1", "hsi1",
                                      "hsi3", "hsi3", "hsi0", "hsi0"};
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(rank_gpus(map, r), std::vector<int>{expected[static_cast<std::size_t>(r)]});
    const auto& gpu = node.gpus[static_cast<std::size_t>(expected[static_cast<std::size_t>(r)])];
    EXPECT_EQ(map.ranks[static_cast<std::size_t>(r)].cpus, gpu.locality) << "rank " << r;
    EXPECT_EQ(rank_nics(node, map, r), std::vector<std::string>{nics[static_cast<std::size_t>(r)]});
  }
  // Four ranks: each takes both GCDs of one MI250X (one NUMA domain) and that domain's NIC.
  const auto four = solve(node, 4, {});
  EXPECT_EQ(rank_gpus(four, 0), (std::vector<int>{4, 5}));
  EXPECT_EQ(rank_gpus(four, 1), (std::vector<int>{2, 3}));
  EXPECT_EQ(rank_gpus(four, 2), (std::vector<int>{6, 7}));
  EXPECT_EQ(rank_gpus(four, 3), (std::vector<int>{0, 1}));
  EXPECT_EQ(cpu_lists(four), (std::vector<std::string>{"0-15,64-79", "16-31,80-95", "32-47,96-111",
                                                       "48-63,112-127"}));
  EXPECT_EQ(rank_nics(node, four, 3), std::vector<std::string>{"hsi0"});
}

TEST(Solve, LassenSpreadsRanksOverBothHcasOfEachSocket) {
  const Node& node = fixture("lassen-power9-4xv100.xml");
  const auto map = solve(node, 4, {});
  for (int r = 0; r < 4; ++r) EXPECT_EQ(rank_gpus(map, r), std::vector<int>{r});
  EXPECT_EQ(numas(map), (std::vector<int>{0, 0, 8, 8}));
  // Both HCAs of a socket are equally far (same NUMA, own host bridges): one each.
  EXPECT_EQ(rank_nics(node, map, 0), std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(rank_nics(node, map, 1), std::vector<std::string>{"mlx5_1"});
  EXPECT_EQ(rank_nics(node, map, 2), std::vector<std::string>{"mlx5_2"});
  EXPECT_EQ(rank_nics(node, map, 3), std::vector<std::string>{"mlx5_3"});
  // SMT4: ten whole cores (40 PUs) each, starting at PU 8 (Lassen has no PU 0-7).
  EXPECT_EQ(cpu_lists(map), (std::vector<std::string>{"8-47", "48-87", "96-135", "136-175"}));
}

TEST(Solve, PascalKeepsEveryRankOnTheGpuSocket) {
  const Node& node = fixture("pascal-2xp100.xml");
  const auto map = solve(node, 2, {});
  EXPECT_EQ(cpu_lists(map), (std::vector<std::string>{"0-8,36-44", "9-17,45-53"}));
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(rank_nics(node, map, r), std::vector<std::string>{"mlx5_0"});
  // Four ranks share two GPUs round-robin, all still on socket 0 (18 cores for 4 ranks).
  const auto four = solve(node, 4, {});
  EXPECT_EQ(rank_gpus(four, 0), std::vector<int>{0});
  EXPECT_EQ(rank_gpus(four, 1), std::vector<int>{1});
  EXPECT_EQ(rank_gpus(four, 2), std::vector<int>{0});
  EXPECT_EQ(numas(four), (std::vector<int>{0, 0, 0, 0}));
  // 36 ranks: socket 0 has 18 cores, so the ranks widen to the whole node.
  const auto all = solve(node, 36, {});
  check_invariants(node, all, 36, {});
  EXPECT_EQ(all.ranks.back().numa, 1);
}

TEST(Solve, Dgx2GroupsGpusByHostBridgeAndSocket) {
  const Node& node = fixture("dgx2-16xv100-trimmed.xml");
  const auto two = solve(node, 2, {});
  EXPECT_EQ(rank_gpus(two, 0), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(rank_gpus(two, 1), (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(numas(two), (std::vector<int>{0, 1}));
  const auto four = solve(node, 4, {});
  for (int r = 0; r < 4; ++r) {
    const auto gpus = rank_gpus(four, r);
    ASSERT_EQ(gpus.size(), 4U);
    for (int gpu : gpus) {
      EXPECT_EQ(pci_distance(node, node.gpus[static_cast<std::size_t>(gpus.front())],
                             node.gpus[static_cast<std::size_t>(gpu)]),
                PciDistance::kSameSwitch)
          << "rank " << r;
    }
  }
  // Fewer cores (4) than GPUs (16): more ranks than cores cannot be bound...
  EXPECT_THROW(solve(node, 16, {}), TopologyError);
  // ...but can run unbound, sharing nothing.
  Policy unbound;
  unbound.cpu = CpuPolicy::kNone;
  const auto sixteen = solve(node, 16, unbound);
  check_invariants(node, sixteen, 16, unbound);
}

TEST(Solve, NoGpusSpreadsRanksOverNumaDomainsInBlocks) {
  const Node& node = fixture("quartz-nogpu.xml");
  const auto four = solve(node, 4, {});
  EXPECT_EQ(numas(four), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(cpu_lists(four), (std::vector<std::string>{"0-8", "9-17", "18-26", "27-35"}));
  // The Omni-Path HFI is the only high-speed NIC: every rank gets it, never a management port.
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(rank_nics(node, four, r), std::vector<std::string>{"hfi1_0"});
  const auto five = solve(node, 5, {});
  EXPECT_EQ(numas(five), (std::vector<int>{0, 0, 0, 1, 1}));
  EXPECT_THROW(solve(node, 37, {}), TopologyError);
  EXPECT_NO_THROW(solve(node, 36, {}));
}

TEST(Solve, SyntheticTopologies) {
  for (const char* desc : {"package:2 numa:2 core:4 pu:2", "package:1 core:6 pu:1",
                           "package:2 l3:2 core:3 pu:4", "numa:3 core:5 pu:1"}) {
    const Node node = load_node_synthetic(desc);
    for (int ranks = 1; ranks <= static_cast<int>(node.cores.size()); ++ranks) {
      for (auto cpu : {CpuPolicy::kNuma, CpuPolicy::kNone}) {
        Policy policy;
        policy.cpu = cpu;
        check_invariants(node, solve(node, ranks, policy), ranks, policy);
      }
    }
  }
  // 2 packages x 2 NUMA x 4 cores, 4 ranks: one NUMA domain (4 cores, 8 PUs) each.
  const Node node = load_node_synthetic("package:2 numa:2 core:4 pu:2");
  const auto map = solve(node, 4, {});
  EXPECT_EQ(numas(map), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(map.ranks[0].cpus.count(), 8);
}

TEST(Solve, RestrictionToTheSchedulersGrant) {
  const Node& node = fixture("polaris-like-4xa100.xml");
  Restriction grant;
  grant.gpus = std::vector<int>{1, 2};  // e.g. SLURM_STEP_GPUS=1,2
  const auto map = solve(node, 2, {}, grant);
  EXPECT_EQ(map.visible_gpus, (std::vector<int>{1, 2}));
  // Indices are relative to the grant: node GPU 2 (NUMA 1, nearer core 0) is relative index 1.
  EXPECT_EQ(rank_gpus(map, 0), std::vector<int>{1});
  EXPECT_EQ(map.ranks[0].node_gpus, std::vector<int>{2});
  EXPECT_EQ(rank_gpus(map, 1), std::vector<int>{0});
  EXPECT_EQ(numas(map), (std::vector<int>{1, 2}));
  check_invariants(node, map, 2, {}, grant);

  Restriction cpus;
  cpus.cpus = CpuSet::parse("0-3,32-35");  // half of NUMA 0: every rank has to live there
  const auto narrow = solve(node, 4, {}, cpus);
  check_invariants(node, narrow, 4, {}, cpus);
  for (const auto& r : narrow.ranks) EXPECT_EQ(r.cpus.count(), 2);
  EXPECT_THROW(solve(node, 5, {}, cpus), TopologyError);

  Restriction missing;
  missing.gpus = std::vector<int>{4};
  try {
    solve(node, 1, {}, missing);
    FAIL() << "no error";
  } catch (const PolicyError& e) {
    EXPECT_NE(std::string(e.what()).find("expected indices 0-3 of its 4 GPUs, got 4"),
              std::string::npos)
        << e.what();
  }
  Restriction nothing;
  nothing.cpus = CpuSet::parse("1000");
  EXPECT_THROW(solve(node, 1, {}, nothing), TopologyError);
}

TEST(Solve, ErrorsNameTheInputAndTheLimit) {
  const Node& node = fixture("quartz-nogpu.xml");
  try {
    solve(node, 40, {});
    FAIL() << "no error";
  } catch (const TopologyError& e) {
    EXPECT_EQ(std::string(e.what()),
              "dtrain: affinity: " + testing::fixture_path("quartz-nogpu.xml") +
                  ": 40 ranks per node but only 36 cores to bind them to; expected at most 36 "
                  "ranks (or --cpu none), got 40");
  }
  try {
    solve(node, 0, {});
    FAIL() << "no error";
  } catch (const PolicyError& e) {
    EXPECT_STREQ(e.what(), "dtrain: affinity: ranks per node: expected at least 1, got 0");
  }
}

// A hand-built node: the solver needs no hwloc.
Node two_socket_node() {
  Node node;
  node.source = "hand-built";
  node.packages = {{0, CpuSet::range(0, 3)}, {1, CpuSet::range(4, 7)}};
  node.numa = {{0, 0, CpuSet::range(0, 1)},
               {1, 0, CpuSet::range(2, 3)},
               {2, 1, CpuSet::range(4, 5)},
               {3, 1, CpuSet::range(6, 7)}};
  for (int c = 0; c < 8; ++c) node.cores.push_back({CpuSet{c}, c / 2, c / 4});
  return node;
}

Gpu gpu_at(std::uint32_t bus, const CpuSet& locality, std::int64_t host_bridge,
           std::vector<std::int64_t> bridges) {
  Gpu g;
  g.pci.bus = bus;
  g.locality = locality;
  g.host_bridge = host_bridge;
  g.bridges = std::move(bridges);
  return g;
}

Nic nic_at(const std::string& name, std::uint32_t bus, const CpuSet& locality,
           std::int64_t host_bridge, std::vector<std::int64_t> bridges) {
  Nic n;
  n.name = name;
  n.kind = NicKind::kInfiniBand;
  n.high_speed = true;
  n.pci.bus = bus;
  n.locality = locality;
  n.host_bridge = host_bridge;
  n.bridges = std::move(bridges);
  return n;
}

TEST(Solve, HandBuiltNodeWidensToThePackageThenTheNode) {
  Node node = two_socket_node();
  // All four GPUs hang off NUMA 0 (two cores): four ranks widen to package 0 (four cores).
  for (std::uint32_t b = 1; b <= 4; ++b) {
    node.gpus.push_back(gpu_at(b, CpuSet::range(0, 1), 100, {static_cast<std::int64_t>(b)}));
  }
  const auto four = solve(node, 4, {});
  check_invariants(node, four, 4, {});
  EXPECT_EQ(cpu_lists(four), (std::vector<std::string>{"0", "1", "2", "3"}));
  // Eight ranks: package 0 is too small as well; the whole node.
  const auto eight = solve(node, 8, {});
  check_invariants(node, eight, 8, {});
  EXPECT_EQ(eight.ranks[7].cpus, CpuSet{7});
}

TEST(Solve, HandBuiltNodeNicLadder) {
  Node node = two_socket_node();
  node.gpus.push_back(gpu_at(1, CpuSet::range(0, 1), 100, {10, 11}));  // behind switch 10
  node.gpus.push_back(gpu_at(2, CpuSet::range(2, 3), 100, {20}));      // same host bridge
  node.gpus.push_back(gpu_at(3, CpuSet::range(4, 5), 200, {30}));      // socket 1, NUMA 2
  node.gpus.push_back(gpu_at(4, CpuSet::range(6, 7), 300, {40}));      // socket 1, NUMA 3
  node.nics.push_back(nic_at("mlx5_0", 5, CpuSet::range(0, 1), 100, {10, 12}));
  node.nics.push_back(nic_at("mlx5_1", 6, CpuSet::range(4, 5), 201, {50}));
  EXPECT_EQ(pci_distance(node, node.gpus[0], node.nics[0]), PciDistance::kSameSwitch);
  EXPECT_EQ(pci_distance(node, node.gpus[1], node.nics[0]), PciDistance::kSameHostBridge);
  EXPECT_EQ(pci_distance(node, node.gpus[2], node.nics[1]), PciDistance::kSameNuma);
  EXPECT_EQ(pci_distance(node, node.gpus[3], node.nics[1]), PciDistance::kSamePackage);
  EXPECT_EQ(pci_distance(node, node.gpus[3], node.nics[0]), PciDistance::kCrossPackage);
  const auto map = solve(node, 4, {});
  check_invariants(node, map, 4, {});
  EXPECT_EQ(rank_nics(node, map, 0), std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(rank_nics(node, map, 1), std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(rank_nics(node, map, 2), std::vector<std::string>{"mlx5_1"});
  EXPECT_EQ(rank_nics(node, map, 3), std::vector<std::string>{"mlx5_1"});
  // With two ranks, each gets two GPUs and the nearest NIC of each.
  const auto two = solve(node, 2, {});
  EXPECT_EQ(rank_nics(node, two, 0), std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(rank_nics(node, two, 1), std::vector<std::string>{"mlx5_1"});
  // Plain Ethernet next to a fabric NIC is a management port, never chosen.
  Nic eth = nic_at("eth0", 7, CpuSet::range(0, 1), 100, {10, 13});
  eth.kind = NicKind::kEthernet;
  eth.high_speed = false;
  node.nics.push_back(eth);
  EXPECT_EQ(candidate_nics(node), (std::vector<int>{0, 1}));
}

TEST(Solve, OwnFirstKeepsEveryGpuVisible) {
  Policy policy;
  policy.gpu_visibility = GpuVisibility::kOwnFirst;
  const auto map = solve(fixture("polaris-like-4xa100.xml"), 4, policy);
  EXPECT_EQ(map.ranks[0].visible_gpus, (std::vector<int>{3, 0, 1, 2}));
  EXPECT_EQ(map.ranks[2].visible_gpus, (std::vector<int>{1, 0, 2, 3}));
}

}  // namespace
}  // namespace dtrain::affinity
