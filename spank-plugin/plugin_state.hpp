// Everything the plugin knows within one process (srun, sbatch, or one step's slurmstepd and the
// task processes it forks), owned by plugin.cpp. SPANK option callbacks carry no user pointer, so
// this one object is the plugin's only mutable global; the context files receive it by reference.
#pragma once

#include <optional>
#include <string>

#include "affinity/topology.hpp"
#include "config.hpp"
#include "options.hpp"
#include "settings.hpp"
#include "task_plan.hpp"

namespace dtrain::spank {

struct PluginState {
  PluginConfig config;
  RequestedOptions options;

  // slurmstepd: set in user_init, read by the tasks it forks.
  std::optional<StepSettings> settings;  // nullopt: the plugin leaves this step alone
  std::optional<affinity::Node> node;
  std::optional<affinity::CpuSet> step_cpus;
  // Slurm does not pass user_init failures on to srun (pyxis, SchedMD bug 7573): a failure there
  // is kept here and reported by each task's task_init, which does fail the task.
  std::string deferred_error;

  // Each task process: the step's GPU grant, read in task_init_privileged before Slurm narrows it
  // to the task.
  launch::Environment step_gpu_env;
};

}  // namespace dtrain::spank
