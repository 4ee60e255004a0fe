#include "plan/planner.hpp"

#include <map>

#include "plan/render.hpp"

namespace dtrain::plan {

LaunchPlan plan_local(const JobSpec& spec, const LocalMachine& machine, const PlanInputs& inputs,
                      std::string_view local_template) {
  LaunchPlan plan;
  plan.name = spec.name;
  plan.site = spec.site;
  plan.job_id = inputs.job_id;
  plan.run_dir = inputs.run_dir;
  plan.nodes = 1;
  plan.ranks_per_node = spec.ranks_per_node;
  plan.command = spec.command;
  for (int r = 0; r < spec.ranks_per_node; ++r) {
    plan.ranks.push_back({r, 0, r, machine.hostname});
  }
  // The user's variables first, then ours, so a spec cannot point the run directory elsewhere
  // behind the planner's back.
  plan.env = spec.env;
  plan.env.emplace_back("DTRAIN_JOB_ID", inputs.job_id);
  plan.env.emplace_back("DTRAIN_RUN_DIR", inputs.run_dir);

  std::string exports;
  for (const auto& [name, value] : plan.env) {
    exports += "export " + name + "=" + shell_quote(value) + "\n";
  }

  std::vector<std::string> mpirun_flags;
  // Open MPI refuses to start as root unless told; containers and CI run as root.
  if (machine.is_root) mpirun_flags.emplace_back("--allow-run-as-root");
  // Open MPI counts one slot per core and refuses more ranks than slots.
  if (spec.ranks_per_node > machine.cores) mpirun_flags.emplace_back("--oversubscribe");

  const std::map<std::string, std::string> values = {
      {"version", inputs.version},
      {"name", spec.name},
      {"world_size", std::to_string(plan.world_size())},
      {"workdir", shell_quote(inputs.workdir)},
      {"run_dir", shell_quote(inputs.run_dir)},
      {"env_exports", exports},
      {"mpirun_flags", mpirun_flags.empty() ? "" : " " + shell_join(mpirun_flags)},
      {"dtrain", shell_quote(inputs.dtrain_exe)},
      {"command", shell_join(spec.command)},
  };
  plan.script = render_template(local_template, values);
  return plan;
}

}  // namespace dtrain::plan
