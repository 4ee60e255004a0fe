// Torque/PBS (and Slurm's Torque wrappers): nodes:ppn directives, Open MPI's mpirun over
// $PBS_NODEFILE, qsub -h, qrls, qdel and qstat -f (whose parser PBS Pro shares).
#include <sstream>

#include "plan/schedulers/adapters.hpp"
#include "plan/schedulers/batch_script.hpp"

namespace dtrain::plan {
namespace {

class Pbs final : public QsubAdapter {
 public:
  std::string_view name() const override { return "pbs"; }

  std::string_view held_job_variable() const override { return "PBS_JOBID"; }
  std::optional<HeldJob> held_job(const launch::Environment& env) const override {
    auto job = SchedulerAdapter::held_job(env);
    if (job) {
      job->node_file = pbs_node_file(env);
      job->default_site = "pbs";
    }
    return job;
  }
  std::vector<std::string> launchers() const override { return {"mpirun"}; }
  std::string template_name() const override { return "pbs.sh.tmpl"; }
  // Torque's qrerun, like PBS Pro's, needs operator privileges.
  std::string requeue_command() const override {
    return qsub_continuation("-W depend=afterany:\"$PBS_JOBID\"", "-v");
  }
  bool output_from_script() const override { return true; }
  std::string no_signal_before_walltime() const override {
    return "Torque/PBS sends no signal before the walltime (SIGTERM at it, then SIGKILL)";
  }

  std::vector<std::string> directives(const JobSpec& spec, const SiteProfile&,
                                      const JobShape& s) const override {
    const int ppn = s.ranks_per_node * (s.cpus_per_rank > 0 ? s.cpus_per_rank : 1);
    std::string nodes = "nodes=" + std::to_string(s.nodes) + ":ppn=" + std::to_string(ppn);
    if (s.gpus_per_rank > 0) {
      nodes += ":gpus=" + std::to_string(s.gpus_per_rank * s.ranks_per_node);
    }
    std::vector<std::string> d = {"-N " + spec.name, "-l " + nodes};
    if (spec.walltime_seconds) d.push_back("-l walltime=" + hh_mm_ss(*spec.walltime_seconds));
    add_pbs_tail_directives(spec, s, d);
    return prefixed(std::move(d), "#PBS ");
  }

  void add_launcher(const PlanDraft& d, TemplateValues& values) const override {
    values["launcher"] = mpirun_launcher(d, "--hostfile \"$PBS_NODEFILE\"");
  }

  Argv status_command(const std::string& job_id) const override { return {"qstat", "-f", job_id}; }
  std::optional<JobStatus> parse_status(std::string_view output) const override {
    return parse_qstat_full(output);
  }
};

}  // namespace

std::optional<JobStatus> parse_qstat_full(std::string_view output) {
  std::optional<JobStatus> status;
  std::istringstream in{std::string(output)};
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    const std::string_view key = trim(std::string_view(line).substr(0, eq));
    const std::string_view value = trim(std::string_view(line).substr(eq + 3));
    if (key == "job_state") {
      if (!status) status.emplace();
      status->state = std::string(value);
      status->running = value == "R";
      // C: Torque's completed; F: PBS Pro's finished (qstat -x); X: a finished subjob.
      status->finished = value == "C" || value == "F" || value == "X";
    } else if (key == "Exit_status") {
      if (!status) status.emplace();
      if (auto v = to_int(value)) {
        // PBS Pro reports a job killed by signal N as 256 + N.
        status->exit_status = *v >= 256 ? 128 + (*v - 256) : *v;
      }
    } else if (key == "comment") {
      if (!status) status.emplace();
      status->reason = std::string(value);
    }
  }
  if (status && status->state.empty()) return std::nullopt;
  if (status && !status->finished) status->exit_status.reset();
  return status;
}

const SchedulerAdapter& pbs_adapter() {
  static const Pbs adapter;
  return adapter;
}

}  // namespace dtrain::plan
