// What one task of a step gets: the binding `dtrain bind` decides (affinity::decide_binding on the
// node's topology, inside what Slurm granted the step), this task's entry of it as environment,
// the framework's rendezvous variables, and whether to bind its CPUs. Pure: remote.cpp gathers the
// facts from slurmstepd and applies the result, the unit tests feed the facts by hand.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "affinity/affinity.hpp"
#include "affinity/topology.hpp"
#include "launch/launcher_env.hpp"
#include "settings.hpp"

namespace dtrain::spank {

// Where the task sits and what the step was granted, as slurmstepd tells it.
struct TaskFacts {
  int rank = 0;        // S_TASK_GLOBAL_ID
  int size = 1;        // S_JOB_TOTAL_TASK_COUNT
  int local_rank = 0;  // S_TASK_ID
  int local_size = 1;  // S_JOB_LOCAL_TASK_COUNT
  int node_rank = 0;   // S_JOB_NODEID
  std::string job_id;  // S_JOB_ID
  std::string hostname;
  // The step's node list as Slurm writes it ("vm", "nid[001-004]"); "" falls back to hostname.
  std::string nodelist;
  // The step's GPU grant as the step (not yet each task) sees it: CUDA_VISIBLE_DEVICES,
  // SLURM_STEP_GPUS, ROCR/HIP_VISIBLE_DEVICES. Slurm narrows these per task (--gpus-per-task)
  // after task_init_privileged, so remote.cpp reads them there.
  launch::Environment step_gpu_env;
  // The CPUs the step may use on this machine (slurmstepd's affinity); nullopt: unknown.
  std::optional<affinity::CpuSet> step_cpus;
  // The job's environment as the task inherits it: a MASTER_PORT (or other rendezvous variable)
  // the user exported wins over the framework's.
  launch::Environment job_env;
};

struct TaskBinding {
  launch::Environment environment;       // exported to the task
  std::optional<affinity::CpuSet> bind;  // the task's CPU affinity; nullopt: left alone
  std::string report;                    // one line for --dtrain-verbose
};

// Throws affinity::TopologyError/PolicyError (a node that cannot host the step, a grant naming
// GPUs the topology lacks) and launch::LauncherEnvError (a malformed node list); the messages
// name the topology source or the variable.
TaskBinding plan_task(const affinity::Node& node, const StepSettings& settings,
                      const TaskFacts& facts);

}  // namespace dtrain::spank
