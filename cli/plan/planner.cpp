#include "plan/planner.hpp"

#include <map>

#include "plan/render.hpp"

namespace dtrain::plan {
namespace {

// Fields that only mean something to a batch scheduler.
std::vector<const char*> ignored_by_local(const JobSpec& spec) {
  std::vector<const char*> out;
  if (!spec.account.empty()) out.push_back("account");
  if (!spec.queue.empty()) out.push_back("queue");
  if (!spec.partition.empty()) out.push_back("partition");
  if (!spec.filesystems.empty()) out.push_back("filesystems");
  if (!spec.directives.empty()) out.push_back("directives");
  for (const char* field : kubernetes_only_fields(spec)) out.push_back(field);
  return out;
}

}  // namespace

std::vector<const char*> kubernetes_only_fields(const JobSpec& spec) {
  std::vector<const char*> out;
  if (!spec.image.empty()) out.push_back("image");
  if (!spec.k8s_namespace.empty()) out.push_back("namespace");
  return out;
}

std::vector<std::string> rank_command(const JobSpec& spec) {
  if (spec.command_is_shell) return {"bash", "-c", spec.command.at(0)};
  return spec.command;
}

std::vector<std::string> bind_policy_flags(const JobSpec& spec, const std::string& prefix,
                                           const std::string& cpu) {
  const auto& a = spec.affinity;
  std::vector<std::string> f = {prefix + "gpu=" + a.gpu,
                                prefix + "gpu-visibility=" + a.gpu_visibility,
                                prefix + "cpu=" + cpu, prefix + "nic=" + a.nic};
  if (spec.framework != Framework::kNone) {
    f.push_back(prefix + "framework=" + std::string(framework_name(spec.framework)));
  }
  return f;
}

LaunchPlan plan_local(const JobSpec& spec, const LocalMachine& machine, const PlanInputs& inputs,
                      std::string_view local_template) {
  LaunchPlan plan;
  plan.name = spec.name;
  plan.site = spec.site;
  plan.job_id = inputs.job_id;
  plan.run_dir = inputs.run_dir;
  plan.nodes = 1;
  plan.ranks_per_node = spec.ranks_per_node_or(1);
  plan.command = rank_command(spec);
  for (const char* field : ignored_by_local(spec)) {
    plan.warnings.push_back(std::string("site local runs on this machine; ignoring ") + field);
  }
  for (int r = 0; r < plan.ranks_per_node; ++r) {
    plan.ranks.push_back({r, 0, r, machine.hostname});
  }
  // The user's variables first, then ours, so a spec cannot point the run directory elsewhere
  // behind the planner's back.
  plan.env = spec.env;
  plan.env.emplace_back("DTRAIN_JOB_ID", inputs.job_id);
  plan.env.emplace_back("DTRAIN_RUN_DIR", inputs.run_dir);

  std::string exports;
  for (const auto& [name, value] : plan.env) {
    exports += shell_export(name, value);
  }

  std::vector<std::string> mpirun_flags;
  // Open MPI refuses to start as root unless told; containers and CI run as root.
  if (machine.is_root) mpirun_flags.emplace_back("--allow-run-as-root");
  // Open MPI counts one slot per core and refuses more ranks than slots.
  if (plan.ranks_per_node > machine.cores) mpirun_flags.emplace_back("--oversubscribe");

  // Every rank goes through `dtrain bind`, as on a cluster: its GPU, cores and NIC from this
  // machine's topology, and the framework's rendezvous variables.
  std::string cpu = spec.affinity.cpu;
  if (cpu == "numa" && plan.ranks_per_node > machine.cores) {
    cpu = "none";
    plan.warnings.push_back("affinity.cpu numa needs a core per rank, and this machine has " +
                            std::to_string(machine.cores) + " for " +
                            std::to_string(plan.ranks_per_node) +
                            " ranks; the ranks are not bound to cores");
  }
  std::vector<std::string> bind = {inputs.dtrain_exe, "bind"};
  for (const auto& f : bind_policy_flags(spec, "--", cpu)) bind.push_back(f);
  bind.emplace_back("--");

  std::string setup;
  if (!spec.modules.empty()) {
    setup += "module load " + shell_join(spec.modules) + "\n";
  }
  // Setup lines are the user's own shell code (conda activate, ...): they go in verbatim.
  for (const auto& line : spec.setup) setup += line + "\n";
  if (!setup.empty()) setup = "\n# setup from the job spec\n" + setup;

  // The walltime is enforced here as a scheduler would: TERM at the limit, KILL 30 s later.
  std::string time_limit;
  if (spec.walltime_seconds) {
    time_limit =
        "timeout --signal=TERM --kill-after=30 " + std::to_string(*spec.walltime_seconds) + " ";
  }

  const std::map<std::string, std::string> values = {
      {"version", inputs.version},
      {"name", spec.name},
      {"world_size", std::to_string(plan.world_size())},
      {"workdir", shell_quote(inputs.workdir)},
      {"run_dir", shell_quote(inputs.run_dir)},
      {"env_exports", exports},
      {"mpirun_flags", mpirun_flags.empty() ? "" : " " + shell_join(mpirun_flags)},
      {"dtrain", shell_quote(inputs.dtrain_exe)},
      {"bind", shell_join(bind)},
      {"command", shell_join(rank_command(spec))},
      {"setup", setup},
      {"time_limit", time_limit},
  };
  plan.script = render_template(local_template, values);
  return plan;
}

}  // namespace dtrain::plan
