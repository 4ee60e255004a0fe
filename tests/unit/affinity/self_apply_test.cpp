// What a process applies to itself (libdtrain's init()): the same entry `dtrain bind` exports, and
// when it binds. Expected GPUs follow ALCF's published Polaris affinity table, which the
// Polaris-like fixture encodes: GPU0 sits on NUMA 3, GPU1 on 2, GPU2 on 1, GPU3 on 0 (cores 0-7,
// SMT siblings 32-39), mlx5_0 beside GPU3.
#include "affinity/self_apply.hpp"

#include <gtest/gtest.h>

#include "affinity/affinity.hpp"
#include "affinity/errors.hpp"
#include "affinity/rank_env.hpp"
#include "fixtures.hpp"

namespace dtrain::affinity {
namespace {

using testing::fixture;
using testing::fixture_path;

// The Polaris-like node as if hwloc had read it from this machine.
Node live_polaris() {
  Node node = fixture("polaris-like-4xa100.xml");
  node.is_this_machine = true;
  return node;
}

std::string get(const launch::Environment& env, const char* name) {
  auto it = env.find(std::string_view(name));
  return it == env.end() ? "<unset>" : it->second;
}

TEST(SelfApplyMode, AcceptsOnOffAndUnset) {
  EXPECT_EQ(parse_self_apply_mode(std::nullopt), SelfApplyMode::kAuto);
  EXPECT_EQ(parse_self_apply_mode(""), SelfApplyMode::kAuto);
  EXPECT_EQ(parse_self_apply_mode("on"), SelfApplyMode::kOn);
  EXPECT_EQ(parse_self_apply_mode("off"), SelfApplyMode::kOff);
}

TEST(SelfApplyMode, AnythingElseNamesTheVariableAndTheValues) {
  for (const char* bad : {"yes", "ON", "1", "auto"}) {
    try {
      parse_self_apply_mode(bad);
      ADD_FAILURE() << bad << ": no error";
    } catch (const PolicyError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("dtrain: DTRAIN_AFFINITY: unknown value; expected on or off (or "
                            "unset: apply when a launcher started the process), got \"") +
                    bad + "\"");
    }
  }
}

TEST(SelfApply, XmlTopologyExportsWhatBindWouldAndNeverBinds) {
  const Node& node = fixture("polaris-like-4xa100.xml");
  const RankMap map = solve(node, 4, Policy{});
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE(r);
    SelfApplyFacts facts;
    facts.local_rank = r;
    facts.local_size = 4;
    // A grant numbers this machine's GPUs, not the file's: ignored, as by `dtrain bind
    // --topology`.
    facts.env = {{"CUDA_VISIBLE_DEVICES", "0,1"}};
    facts.current_cpus = CpuSet{0};
    const SelfApply plan = plan_self_apply(node, facts);
    EXPECT_EQ(plan.environment, rank_environment(node, map, r));
    EXPECT_FALSE(plan.bind);
    EXPECT_EQ(plan.not_bound,
              "topology " + fixture_path("polaris-like-4xa100.xml") + " is not this machine");
  }
  SelfApplyFacts first;
  first.local_size = 4;
  EXPECT_EQ(plan_self_apply(node, first).summary, "gpus 3 cpus 0-7,32-39 nics mlx5_0");
}

TEST(SelfApply, ThisMachineUnboundIsBoundToTheRankCpus) {
  const Node node = live_polaris();
  SelfApplyFacts facts;
  facts.local_rank = 0;
  facts.local_size = 4;
  facts.current_cpus = node.all_pus();
  const SelfApply plan = plan_self_apply(node, facts);
  ASSERT_TRUE(plan.bind);
  EXPECT_EQ(plan.bind->to_list(), "0-7,32-39");
  EXPECT_EQ(get(plan.environment, "DTRAIN_CPUSET"), "0-7,32-39");
  EXPECT_EQ(get(plan.environment, "CUDA_VISIBLE_DEVICES"), "3");
  EXPECT_EQ(plan.not_bound, "");
}

TEST(SelfApply, UnknownCurrentCpusCountAsUnbound) {
  const Node node = live_polaris();
  SelfApplyFacts facts;
  facts.local_size = 4;
  for (const auto& cpus : {std::optional<CpuSet>(), std::optional<CpuSet>(CpuSet())}) {
    facts.current_cpus = cpus;
    EXPECT_TRUE(plan_self_apply(node, facts).bind);
  }
}

TEST(SelfApply, LauncherBindingIsKeptAndReported) {
  const Node node = live_polaris();
  SelfApplyFacts facts;
  facts.local_rank = 0;
  facts.local_size = 4;
  facts.current_cpus = CpuSet{20, 52};  // mpirun's core for this rank, not the solver's
  const SelfApply plan = plan_self_apply(node, facts);
  EXPECT_FALSE(plan.bind);
  EXPECT_EQ(plan.not_bound, "bound by the launcher");
  EXPECT_EQ(get(plan.environment, "DTRAIN_CPUSET"), "20,52");
  // The GPU is still the one nearest the rank's place in the taking order.
  EXPECT_EQ(get(plan.environment, "CUDA_VISIBLE_DEVICES"), "3");
}

TEST(SelfApply, SchedulerGrantIsHonouredOnThisMachine) {
  // Granted GPUs 1 (NUMA 2) and 2 (NUMA 1): rank 0 takes the one nearer the first cores, GPU 2,
  // relative index 1 of the grant, written as the scheduler numbered it.
  const Node node = live_polaris();
  SelfApplyFacts facts;
  facts.local_rank = 0;
  facts.local_size = 2;
  facts.env = {{"CUDA_VISIBLE_DEVICES", "1,2"}};
  facts.current_cpus = node.all_pus();
  const SelfApply plan = plan_self_apply(node, facts);
  EXPECT_EQ(get(plan.environment, "CUDA_VISIBLE_DEVICES"), "2");
  EXPECT_EQ(get(plan.environment, "DTRAIN_GPUS"), "1");
}

TEST(SelfApply, UnreadableGrantIsAnError) {
  const Node node = live_polaris();
  SelfApplyFacts facts;
  facts.env = {{"CUDA_VISIBLE_DEVICES", "GPU-1f2e"}};
  EXPECT_THROW(plan_self_apply(node, facts), PolicyError);
}

TEST(SelfApply, MoreRanksThanCoresLeavesCpusAlone) {
  Node node = load_node_synthetic("package:1 core:2 pu:1");
  node.is_this_machine = true;
  SelfApplyFacts facts;
  facts.local_rank = 3;
  facts.local_size = 4;
  facts.current_cpus = node.all_pus();
  const SelfApply plan = plan_self_apply(node, facts);
  EXPECT_FALSE(plan.bind);
  EXPECT_EQ(plan.not_bound, "4 ranks on 2 cores");
  EXPECT_EQ(get(plan.environment, "DTRAIN_CPUSET"), "0-1");
  EXPECT_EQ(plan.summary, "gpus - cpus 0-1");
}

TEST(SelfApply, NicVariablesTheUserSetWin) {
  // Under a plain mpirun the rank inherits NCCL_SOCKET_IFNAME=ib0 from the user's shell: init()
  // must not replace it with its own choice (it did: "=eth0").
  Node node = load_node_synthetic("package:1 core:4 pu:1");
  node.is_this_machine = true;
  Nic eth;
  eth.name = eth.netdev = "eth0";
  eth.locality = node.all_pus();
  node.nics.push_back(eth);
  SelfApplyFacts facts;
  facts.env = {{"NCCL_SOCKET_IFNAME", "ib0"}, {"GLOO_SOCKET_IFNAME", ""}};
  facts.current_cpus = node.all_pus();
  const SelfApply plan = plan_self_apply(node, facts);
  EXPECT_EQ(get(plan.environment, "NCCL_SOCKET_IFNAME"), "<unset>") << "the user's value stays";
  // Set but empty is unset: the solver's choice goes in.
  EXPECT_EQ(get(plan.environment, "GLOO_SOCKET_IFNAME"), "eth0");
  EXPECT_EQ(get(plan.environment, "UCX_NET_DEVICES"), "eth0");
  EXPECT_EQ(get(plan.environment, "DTRAIN_NICS"), "eth0");
}

}  // namespace
}  // namespace dtrain::affinity
