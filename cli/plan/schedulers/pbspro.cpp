// PBS Pro (Polaris): select/place directives, Cray PALS mpiexec or Open MPI's mpirun, qsub -h,
// qrls, qdel and qstat -x -f.
#include <algorithm>

#include "plan/render.hpp"
#include "plan/schedulers/adapters.hpp"
#include "plan/schedulers/batch_script.hpp"

namespace dtrain::plan {
namespace {

std::string select_chunk(const SiteProfile& site, const JobShape& s) {
  std::string select = "select=" + std::to_string(s.nodes);
  if (!site.select.empty()) return select + ":" + site.select;
  select += ":mpiprocs=" + std::to_string(s.ranks_per_node);
  if (s.cpus_per_rank > 0) select += ":ncpus=" + std::to_string(s.cpus_per_rank * s.ranks_per_node);
  if (s.gpus_per_rank > 0) select += ":ngpus=" + std::to_string(s.gpus_per_rank * s.ranks_per_node);
  return select;
}

// Cray PALS gives each rank `--depth` CPUs. With `--cpu-bind depth` they are hardware threads in
// the node's numbering, which on an SMT node lists every core's first thread before any second
// one (Polaris: GPU3's CPUs are 0-7 and 32-39), so 16 of them would be the first threads of 16
// cores; with `--cpu-bind core` depth counts cores, each with all its threads
// (PbsPro.DepthGivesEachRankItsCpusPerRank, the polaris goldens). cpus_per_rank counts hardware
// threads (docs/spec.md): a whole number of cores binds that many cores (4 ranks of 16 on Polaris:
// --depth 8, one NUMA domain each, as ALCF's GPU example), any other count that many hardware
// threads.
std::string pals_mpiexec(const SiteProfile& site, const JobShape& s) {
  const int threads = std::max(1, site.threads_per_core);
  const int cpus = std::max(1, s.cpus_per_rank);
  const bool whole_cores = threads > 1 && cpus % threads == 0;
  return shell_join({"mpiexec", "-n", std::to_string(s.nodes * s.ranks_per_node), "--ppn",
                     std::to_string(s.ranks_per_node), "--depth",
                     std::to_string(whole_cores ? cpus / threads : cpus), "--cpu-bind",
                     whole_cores ? "core" : "depth"});
}

class PbsPro final : public QsubAdapter {
 public:
  std::string_view name() const override { return "pbspro"; }

  // PBS Pro and Torque both name the job PBS_JOBID; the nodes are the node file's. No built-in
  // site is a generic PBS Pro cluster: Torque's `pbs` is the default, Polaris is --site polaris.
  std::string_view held_job_variable() const override { return "PBS_JOBID"; }
  std::optional<HeldJob> held_job(const launch::Environment& env) const override {
    auto job = SchedulerAdapter::held_job(env);
    if (job) job->node_file = pbs_node_file(env);
    return job;
  }
  std::vector<std::string> launchers() const override { return {"mpiexec", "mpirun"}; }
  std::string template_name() const override { return "pbspro.sh.tmpl"; }
  // qrerun needs Manager or Operator privilege on PBS Pro.
  std::string requeue_command() const override {
    return qsub_continuation("-W depend=afterany:\"$PBS_JOBID\"", "-v");
  }
  bool output_from_script() const override { return true; }
  std::string no_signal_before_walltime() const override {
    return "PBS Pro sends no signal before the walltime (SIGTERM at it, then SIGKILL)";
  }

  std::vector<std::string> directives(const JobSpec& spec, const SiteProfile& site,
                                      const JobShape& s) const override {
    std::vector<std::string> d = {"-N " + spec.name, "-l " + select_chunk(site, s)};
    if (!site.place.empty()) d.push_back("-l place=" + site.place);
    if (spec.walltime_seconds) d.push_back("-l walltime=" + hh_mm_ss(*spec.walltime_seconds));
    const auto& fs = filesystems_or_default(spec, site);
    if (!fs.empty()) d.push_back("-l filesystems=" + join(fs, ":"));
    add_pbs_tail_directives(spec, s, d);
    return prefixed(std::move(d), "#PBS ");
  }

  void add_launcher(const PlanDraft& d, TemplateValues& values) const override {
    values["launcher"] = d.site.launcher == "mpiexec"
                             ? pals_mpiexec(d.site, d.shape)
                             : mpirun_launcher(d, "--hostfile \"$PBS_NODEFILE\"");
  }

  // -x: finished jobs too.
  Argv status_command(const std::string& job_id) const override {
    return {"qstat", "-x", "-f", job_id};
  }
  std::optional<JobStatus> parse_status(std::string_view output) const override {
    return parse_qstat_full(output);
  }
};

}  // namespace

const SchedulerAdapter& pbspro_adapter() {
  static const PbsPro adapter;
  return adapter;
}

}  // namespace dtrain::plan
