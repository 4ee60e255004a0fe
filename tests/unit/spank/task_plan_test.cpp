#include "task_plan.hpp"

#include <gtest/gtest.h>

#include "affinity/errors.hpp"

namespace dtrain::spank {
namespace {

using launch::Environment;

const affinity::Node& polaris() {
  static const affinity::Node node =
      affinity::load_node_xml(DTRAIN_FIXTURE_DIR "/topologies/polaris-like-4xa100.xml");
  return node;
}

StepSettings bind_with(launch::Framework framework = launch::Framework::kNone) {
  StepSettings s;
  s.policy.enabled = true;
  s.framework = framework;
  return s;
}

TaskFacts task(int local_rank, int local_size = 4) {
  TaskFacts f;
  f.rank = local_rank;
  f.size = local_size;
  f.local_rank = local_rank;
  f.local_size = local_size;
  f.job_id = "42";
  f.hostname = "x3004c0s7b0n0";
  f.nodelist = "x3004c0s7b0n0";
  return f;
}

TEST(TaskPlan, PolarisTasksGetTheirGpuCoresAndNic) {
  // ALCF's Polaris table: GPU 3 sits next to NUMA 0 (cores 0-7), GPU 0 next to NUMA 3.
  const std::vector<std::string> cpus{"0-7,32-39", "8-15,40-47", "16-23,48-55", "24-31,56-63"};
  for (int r = 0; r < 4; ++r) {
    const TaskBinding b = plan_task(polaris(), bind_with(), task(r));
    EXPECT_EQ(b.environment.at("CUDA_VISIBLE_DEVICES"), std::to_string(3 - r));
    EXPECT_EQ(b.environment.at("DTRAIN_CPUSET"), cpus[static_cast<std::size_t>(r)]);
    EXPECT_EQ(b.environment.at("DTRAIN_LOCAL_RANK"), std::to_string(r));
    EXPECT_EQ(b.environment.at("DTRAIN_LOCAL_SIZE"), "4");
    // An XML file is not this machine: nothing is bound from it.
    EXPECT_FALSE(b.bind.has_value());
    EXPECT_EQ(b.environment.count("MASTER_ADDR"), 0U);
  }
  EXPECT_EQ(plan_task(polaris(), bind_with(), task(0)).environment.at("NCCL_IB_HCA"), "=mlx5_0");
  EXPECT_EQ(plan_task(polaris(), bind_with(), task(2)).environment.at("NCCL_IB_HCA"), "=mlx5_1");
}

// Rank 3 of a 4-task step on nid[001-002]: local rank 1 of 2 on the second node.
TaskFacts second_node_task() {
  TaskFacts f = task(1, 2);
  f.rank = 3;
  f.size = 4;
  f.node_rank = 1;
  f.nodelist = "nid[001-002]";
  return f;
}

// Each of `expected` is in `b`'s environment with that value.
void expect_variables(const TaskBinding& b, const launch::Environment& expected) {
  for (const auto& [name, value] : expected) {
    ASSERT_EQ(b.environment.count(name), 1U) << name;
    EXPECT_EQ(b.environment.at(name), value) << name;
  }
}

TEST(TaskPlan, TorchVariablesFromTheTasksPlaceInTheStep) {
  const TaskBinding b =
      plan_task(polaris(), bind_with(launch::Framework::kTorch), second_node_task());
  expect_variables(b, {{"MASTER_ADDR", "nid001"},
                       {"MASTER_PORT", std::to_string(launch::rendezvous_port("42"))},
                       {"RANK", "3"},
                       {"LOCAL_RANK", "1"},
                       {"WORLD_SIZE", "4"},
                       {"LOCAL_WORLD_SIZE", "2"},
                       {"NODE_RANK", "1"}});
}

TEST(TaskPlan, AMasterPortTheJobExportedWins) {
  // Issue 22, item 18: srun --dtrain-framework=torch under `export MASTER_PORT=29533`.
  TaskFacts f = task(0, 2);
  f.job_env = {{"MASTER_PORT", "29533"}};
  const TaskBinding b = plan_task(polaris(), bind_with(launch::Framework::kTorch), f);
  EXPECT_EQ(b.environment.count("MASTER_PORT"), 0U);  // the task keeps the job's value
  EXPECT_EQ(b.environment.at("MASTER_ADDR"), "x3004c0s7b0n0");
  EXPECT_EQ(b.environment.at("RANK"), "0");
}

TEST(TaskPlan, EveryTaskGetsItsGlobalPlaceAndJob) {
  // docs/spec.md promises these to every rank, whether run-rank or the plugin started it; a task
  // of a 2-node step knows its global rank even with no framework asked for.
  const TaskBinding b = plan_task(polaris(), bind_with(), second_node_task());
  expect_variables(b, {{"DTRAIN_RANK", "3"},
                       {"DTRAIN_WORLD_SIZE", "4"},
                       {"DTRAIN_LOCAL_RANK", "1"},
                       {"DTRAIN_LOCAL_SIZE", "2"},
                       {"DTRAIN_JOB_ID", "42"}});
}

TEST(TaskPlan, StepGrantIsHonouredAndMappedThrough) {
  // Slurm granted node GPUs 1 and 2 to a two-task step.
  TaskFacts f = task(0, 2);
  f.step_gpu_env = {{"SLURM_STEP_GPUS", "1,2"}, {"CUDA_VISIBLE_DEVICES", "1,2"}};
  const TaskBinding b0 = plan_task(polaris(), bind_with(), f);
  f.local_rank = 1;
  const TaskBinding b1 = plan_task(polaris(), bind_with(), f);
  // Closest order puts GPU 2 (NUMA 1) before GPU 1 (NUMA 2).
  EXPECT_EQ(b0.environment.at("CUDA_VISIBLE_DEVICES"), "2");
  EXPECT_EQ(b1.environment.at("CUDA_VISIBLE_DEVICES"), "1");
  EXPECT_EQ(b0.environment.at("DTRAIN_CPUSET"), "8-15,40-47");
}

TEST(TaskPlan, GrantOutsideTheTopologyIsAnError) {
  TaskFacts f = task(0, 1);
  f.step_gpu_env = {{"SLURM_STEP_GPUS", "7"}};
  EXPECT_THROW(plan_task(polaris(), bind_with(), f), affinity::PolicyError);
  f.step_gpu_env = {{"CUDA_VISIBLE_DEVICES", "GPU-1234"}};
  try {
    plan_task(polaris(), bind_with(), f);
    FAIL() << "expected an error";
  } catch (const affinity::PolicyError& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA_VISIBLE_DEVICES"), std::string::npos);
  }
}

TEST(TaskPlan, LiveNodeIsBoundWithinTheStepsCpus) {
  const affinity::Node node = affinity::load_node_synthetic("package:2 core:4 pu:2");
  affinity::Node live = node;
  live.is_this_machine = true;  // what load_live_node() would say
  TaskFacts f = task(1, 2);
  f.step_cpus = affinity::CpuSet::parse("0-7");
  const TaskBinding b = plan_task(live, bind_with(), f);
  ASSERT_TRUE(b.bind.has_value());
  EXPECT_TRUE(b.bind->is_subset_of(*f.step_cpus));
  EXPECT_EQ(b.bind->to_list(), b.environment.at("DTRAIN_CPUSET"));
  StepSettings no_cpu = bind_with();
  no_cpu.policy.affinity.cpu = affinity::CpuPolicy::kNone;
  EXPECT_FALSE(plan_task(live, no_cpu, f).bind.has_value());
}

TEST(TaskPlan, RunDirAndReport) {
  StepSettings s = bind_with();
  s.run_dir = "/scratch/run";
  const TaskBinding b = plan_task(polaris(), s, task(0));
  EXPECT_EQ(b.environment.at("DTRAIN_RUN_DIR"), "/scratch/run");
  EXPECT_EQ(b.report, "dtrain: x3004c0s7b0n0 task 0 (local 0 of 4): CUDA_VISIBLE_DEVICES=3 [" +
                          polaris().gpus[3].pci.to_string() +
                          "] cpus=0-7,32-39 (numa 0) nics=mlx5_0 not bound (topology " +
                          polaris().source + ")");
}

TEST(TaskPlan, NodeListThatMissesTheTasksNodeIsAnError) {
  TaskFacts f = task(0, 1);
  f.node_rank = 2;
  f.nodelist = "nid[001-002]";
  try {
    plan_task(polaris(), bind_with(launch::Framework::kTorch), f);
    FAIL() << "expected an error";
  } catch (const launch::LauncherEnvError& e) {
    EXPECT_NE(std::string(e.what()).find("SLURM_STEP_NODELIST: this task is on node 2"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace dtrain::spank
