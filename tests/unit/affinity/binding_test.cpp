// The one binding decision, path by path as its three callers take them: `dtrain bind` (grant only
// live, --gpus-allowed/--cpus-allowed), the SPANK plugin (grant on any topology, the step's CPUs)
// and init() (after start: the launcher's binding kept, oversubscription tolerated). Expected
// GPUs follow the Polaris-like fixture: GPU0 sits on NUMA 3, GPU1 on 2, GPU2 on 1, GPU3 on 0
// (cores 0-7, SMT siblings 32-39).
#include "affinity/binding.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "affinity/errors.hpp"
#include "affinity/rank_env.hpp"
#include "fixtures.hpp"

namespace dtrain::affinity {
namespace {

using testing::all_fixtures;
using testing::fixture;

constexpr BindingRules kBind{GrantRule::kNever, Moment::kAtBirth};  // bind --topology FILE
constexpr BindingRules kBindLive{GrantRule::kAlways, Moment::kAtBirth};
constexpr BindingRules kPlugin{GrantRule::kAlways, Moment::kAtBirth};
constexpr BindingRules kInit{GrantRule::kThisMachine, Moment::kAfterStart};

Node live(const std::string& name) {
  Node node = fixture(name);
  node.is_this_machine = true;
  return node;
}

BindingFacts rank_of(int local_rank, int local_size) {
  BindingFacts f;
  f.local_rank = local_rank;
  f.local_size = local_size;
  return f;
}

std::string get(const launch::Environment& env, const char* name) {
  auto it = env.find(std::string_view(name));
  return it == env.end() ? "<unset>" : it->second;
}

TEST(Binding, WithoutFactsItIsTheSolversEntryOnEveryFixture) {
  for (const auto& name : all_fixtures()) {
    const Node& node = fixture(name);
    // A rank per GPU (two without GPUs), as many as the cores allow (the trimmed DGX-2 has 4).
    const int ranks = std::min(node.gpus.empty() ? 2 : static_cast<int>(node.gpus.size()),
                               static_cast<int>(node.cores.size()));
    const RankMap map = solve(node, ranks, Policy{});
    for (int r = 0; r < ranks; ++r) {
      SCOPED_TRACE(name + " rank " + std::to_string(r));
      const Binding b = decide_binding(node, Policy{}, rank_of(r, ranks), kBind);
      EXPECT_EQ(b.environment, rank_environment(node, map, r));
      EXPECT_EQ(b.rank().cpus, map.ranks[static_cast<std::size_t>(r)].cpus);
      EXPECT_FALSE(b.bind);
      EXPECT_EQ(b.not_bound, NotBound::kNotThisMachine);
    }
  }
}

TEST(Binding, ThisMachineAtBirthBindsTheRankCpus) {
  const Node node = live("polaris-like-4xa100.xml");
  const Binding b = decide_binding(node, Policy{}, rank_of(0, 4), kBindLive);
  ASSERT_TRUE(b.bind);
  EXPECT_EQ(b.bind->to_list(), "0-7,32-39");
  EXPECT_EQ(b.not_bound, NotBound::kBound);
  EXPECT_EQ(get(b.environment, "CUDA_VISIBLE_DEVICES"), "3");
}

TEST(Binding, CpuPolicyNoneIsNotBoundOnThisMachineOnly) {
  Policy policy;
  policy.cpu = CpuPolicy::kNone;
  const Binding here =
      decide_binding(live("polaris-like-4xa100.xml"), policy, rank_of(0, 4), kBindLive);
  EXPECT_FALSE(here.bind);
  EXPECT_EQ(here.not_bound, NotBound::kCpuPolicyNone);
  // An XML file is never bound, whatever the policy: that is the reason the reports give.
  const Binding file =
      decide_binding(fixture("polaris-like-4xa100.xml"), policy, rank_of(0, 4), kBind);
  EXPECT_EQ(file.not_bound, NotBound::kNotThisMachine);
}

TEST(Binding, GrantRulesDecideWhereTheGrantCounts) {
  // Granted GPUs 1 (NUMA 2) and 2 (NUMA 1): rank 0 takes the one nearer the first cores, GPU 2.
  BindingFacts facts = rank_of(0, 2);
  facts.grant_env = {{"CUDA_VISIBLE_DEVICES", "1,2"}};
  const Node& file = fixture("polaris-like-4xa100.xml");
  const Node here = live("polaris-like-4xa100.xml");
  // Ungranted, rank 0 of 2 takes the two GPUs nearest the first cores, 3 (NUMA 0) and 2.
  EXPECT_EQ(get(decide_binding(file, Policy{}, facts, kBind).environment, "CUDA_VISIBLE_DEVICES"),
            "2,3");
  EXPECT_EQ(get(decide_binding(file, Policy{}, facts, kInit).environment, "CUDA_VISIBLE_DEVICES"),
            "2,3");
  EXPECT_EQ(get(decide_binding(here, Policy{}, facts, kInit).environment, "CUDA_VISIBLE_DEVICES"),
            "2");
  // The plugin's admin topology= file is declared to be this node.
  const Binding plugin = decide_binding(file, Policy{}, facts, kPlugin);
  EXPECT_EQ(get(plugin.environment, "CUDA_VISIBLE_DEVICES"), "2");
  EXPECT_EQ(get(plugin.environment, "DTRAIN_GPUS"), "1");
}

TEST(Binding, TheGrantIsNotReadWhenNotNeeded) {
  // GPU UUIDs cannot be read as a restriction: an error only when the grant is consulted.
  BindingFacts facts = rank_of(0, 4);
  facts.grant_env = {{"CUDA_VISIBLE_DEVICES", "GPU-1f2e"}};
  const Node& file = fixture("polaris-like-4xa100.xml");
  EXPECT_THROW(decide_binding(file, Policy{}, facts, kPlugin), PolicyError);
  Policy no_gpus;
  no_gpus.gpu = GpuPolicy::kNone;
  EXPECT_NO_THROW(decide_binding(file, no_gpus, facts, kPlugin));
  facts.requested.gpus = std::vector<int>{0, 1, 2, 3};  // --gpus-allowed wins over the grant
  const Binding b = decide_binding(file, Policy{}, facts, kPlugin);
  EXPECT_EQ(get(b.environment, "CUDA_VISIBLE_DEVICES"), "3");
}

TEST(Binding, RequestedCpusWinOnAnyTopology) {
  BindingFacts facts = rank_of(0, 1);
  facts.requested.cpus = CpuSet::parse("8-15,40-47");
  facts.current_cpus = CpuSet::parse("0-7,32-39");
  for (const Node& node : {fixture("polaris-like-4xa100.xml"), live("polaris-like-4xa100.xml")}) {
    const Binding b = decide_binding(node, Policy{}, facts, kPlugin);
    EXPECT_TRUE(b.rank().cpus.is_subset_of(*facts.requested.cpus)) << b.rank().cpus.to_list();
  }
}

TEST(Binding, AtBirthTheCurrentCpusRestrictOnThisMachineOnly) {
  // The SPANK plugin's step cpuset: the solver works inside it.
  BindingFacts facts = rank_of(0, 1);
  facts.current_cpus = CpuSet::parse("8-15,40-47");
  const Binding here = decide_binding(live("polaris-like-4xa100.xml"), Policy{}, facts, kPlugin);
  ASSERT_TRUE(here.bind);
  EXPECT_TRUE(here.bind->is_subset_of(*facts.current_cpus)) << here.bind->to_list();
  const Binding file = decide_binding(fixture("polaris-like-4xa100.xml"), Policy{}, facts, kPlugin);
  EXPECT_FALSE(file.rank().cpus.is_subset_of(*facts.current_cpus));
}

TEST(Binding, AfterStartTheLaunchersBindingIsKept) {
  const Node node = live("polaris-like-4xa100.xml");
  BindingFacts facts = rank_of(0, 4);
  facts.current_cpus = CpuSet{20, 52};
  const Binding b = decide_binding(node, Policy{}, facts, kInit);
  EXPECT_FALSE(b.bind);
  EXPECT_EQ(b.not_bound, NotBound::kLauncherBound);
  EXPECT_EQ(b.policy.cpu, CpuPolicy::kNone);
  EXPECT_EQ(get(b.environment, "DTRAIN_CPUSET"), "20,52");
  // A process allowed the whole node (or not knowing) is not bound yet.
  facts.current_cpus = node.all_pus();
  EXPECT_TRUE(decide_binding(node, Policy{}, facts, kInit).bind);
  facts.current_cpus = CpuSet();
  EXPECT_TRUE(decide_binding(node, Policy{}, facts, kInit).bind);
}

TEST(Binding, OversubscriptionIsAnErrorAtBirthAndToleratedAfterStart) {
  Node node = load_node_synthetic("package:1 core:2 pu:1");
  node.is_this_machine = true;
  const BindingFacts facts = rank_of(3, 4);
  EXPECT_THROW(decide_binding(node, Policy{}, facts, kBindLive), TopologyError);
  const Binding b = decide_binding(node, Policy{}, facts, kInit);
  EXPECT_FALSE(b.bind);
  EXPECT_EQ(b.not_bound, NotBound::kOversubscribed);
  EXPECT_EQ(get(b.environment, "DTRAIN_CPUSET"), "0-1");
  // Another machine's topology stays the reason, as init() reports it.
  Node file = node;
  file.is_this_machine = false;
  EXPECT_EQ(decide_binding(file, Policy{}, facts, kInit).not_bound, NotBound::kNotThisMachine);
}

TEST(Binding, FrameworkVariablesComeFromThePlacementAfterTheSolve) {
  BindingFacts facts = rank_of(1, 2);
  int asked = 0;
  facts.placement = [&] {
    ++asked;
    launch::JobPlacement p;
    p.rank = 3;
    p.size = 4;
    p.local_rank = 1;
    p.local_size = 2;
    p.node_rank = 1;
    p.hosts = {"nid001", "nid002"};
    p.job_id = "42";
    return p;
  };
  const Node& node = fixture("polaris-like-4xa100.xml");
  EXPECT_EQ(decide_binding(node, Policy{}, facts, kBind).environment.count("MASTER_ADDR"), 0U);
  EXPECT_EQ(asked, 0);
  facts.framework = launch::Framework::kTorch;
  const Binding b = decide_binding(node, Policy{}, facts, kBind);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(get(b.environment, "MASTER_ADDR"), "nid001");
  EXPECT_EQ(get(b.environment, "RANK"), "3");
  EXPECT_EQ(get(b.environment, "DTRAIN_LOCAL_RANK"), "1");
  // A node that cannot host the ranks is reported before the placement is looked at.
  facts.local_size = 1000;
  EXPECT_THROW(decide_binding(node, Policy{}, facts, kBind), TopologyError);
  EXPECT_EQ(asked, 1);
}

}  // namespace
}  // namespace dtrain::affinity
