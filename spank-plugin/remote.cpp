#include "remote.hpp"

#include <unistd.h>
#include <cstdlib>

#include "affinity/process_binding.hpp"
#include "affinity/topology.hpp"
#include "common/alarm_datagram.hpp"
#include "records/output_tee.hpp"
#include "task_output.hpp"

namespace dtrain::spank {
namespace {

// --dtrain-verbose goes to the task's own stderr, next to the task's output (slurm_error() would
// prefix it with "slurmstepd-<host>: error:").
void tell_task(const std::string& line) {
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// slurm_error() in a task process reaches the user's srun/job stderr as
// "slurmstepd-<host>: error: ..." (and slurmd's log).
int task_failed(const PluginState& state, const std::string& message) {
  if (state.settings && state.settings->policy.best_effort) {
    log_error(message + " (best-effort: this task runs unbound)");
    return 0;
  }
  log_error(message);
  return -1;
}

std::string first_of(const launch::Environment& env, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = env.find(std::string_view(n));
    if (it != env.end() && !it->second.empty()) return it->second;
  }
  return "";
}

}  // namespace

int remote_user_init(const Spank& sp, PluginState& state) {
  try {
    if (!sp.is_job_step()) return 0;
    StepSettings settings = resolve_settings(state.options, sp.job_environment(), state.config);
    if (!settings.policy.enabled) return 0;
    state.settings = settings;
    state.node = state.config.topology.empty() ? affinity::load_live_node()
                                               : affinity::load_node_xml(state.config.topology);
    // slurmstepd runs inside the step's cpuset (task/cgroup), before Slurm binds any task.
    state.step_cpus = affinity::current_cpu_affinity();
    log_debug("dtrain: step " + std::to_string(sp.job_id()) + "." + std::to_string(sp.step_id()) +
              ": policy " + to_string(settings.policy) + " on " + state.node->source);
  } catch (const std::exception& e) {
    state.deferred_error = e.what();
  }
  return 0;
}

int remote_task_init_privileged(const Spank& sp, PluginState& state) {
  if (!state.settings) return 0;
  try {
    const auto env = sp.job_environment();
    for (const char* name : {"CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "ROCR_VISIBLE_DEVICES",
                             "HIP_VISIBLE_DEVICES"}) {
      if (auto it = env.find(std::string_view(name)); it != env.end()) {
        state.step_gpu_env.insert(*it);
      }
    }
  } catch (const std::exception& e) {
    if (state.deferred_error.empty()) state.deferred_error = e.what();
  }
  return 0;
}

int remote_task_init(const Spank& sp, PluginState& state) {
  if (!state.deferred_error.empty()) return task_failed(state, state.deferred_error);
  if (!state.settings || !state.node) return 0;
  try {
    const auto env = sp.job_environment();
    TaskFacts facts;
    facts.rank = static_cast<int>(sp.task_global_id());
    facts.size = static_cast<int>(sp.total_task_count());
    facts.local_rank = sp.task_id();
    facts.local_size = static_cast<int>(sp.local_task_count());
    facts.node_rank = static_cast<int>(sp.node_id());
    facts.job_id = std::to_string(sp.job_id());
    facts.hostname = launch::this_hostname();
    facts.nodelist = first_of(env, {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"});
    facts.step_gpu_env = state.step_gpu_env;
    facts.step_cpus = state.step_cpus;
    facts.job_env = env;

    const TaskBinding binding = plan_task(*state.node, *state.settings, facts);
    if (!state.settings->run_dir.empty()) {
      tee_task_output(state.settings->run_dir,
                      {facts.rank, facts.size, records::this_host(), facts.local_rank,
                       facts.local_size, 0, records::join_command(sp.job_argv()),
                       records::attempt_from_text(first_of(env, {"DTRAIN_ATTEMPT"}))});
    }
    if (!state.settings->run_dir.empty()) {
      // The logger's alarm socket (records/rank_alarm.hpp), named in this process's environment
      // by tee_task_output; the task gets the job's environment, so it goes there too.
      if (const char* alarm_fd = std::getenv(kAlarmFdVariable))
        sp.setenv(kAlarmFdVariable, alarm_fd);
    }
    if (binding.bind) affinity::bind_this_process(*binding.bind);
    for (const auto& [name, value] : binding.environment) sp.setenv(name, value);
    if (state.settings->verbose) tell_task(binding.report);
  } catch (const std::exception& e) {
    return task_failed(state, e.what());
  }
  return 0;
}

}  // namespace dtrain::spank
