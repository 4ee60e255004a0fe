// Cobalt (ThetaGPU): #COBALT directives, Open MPI's mpirun over $COBALT_NODEFILE, qsub -h, qrls,
// qdel and qstat's table.
#include <algorithm>
#include <sstream>

#include "plan/schedulers/adapters.hpp"
#include "plan/schedulers/batch_script.hpp"

namespace dtrain::plan {
namespace {

// Whole minutes, rounded up.
std::string cobalt_minutes(long s) { return std::to_string((s + 59) / 60); }

class Cobalt final : public QsubAdapter {
 public:
  std::string_view name() const override { return "cobalt"; }

  std::string_view held_job_variable() const override { return "COBALT_JOBID"; }
  std::optional<HeldJob> held_job(const launch::Environment& env) const override {
    auto job = SchedulerAdapter::held_job(env);
    if (job) {
      job->nodes = env_node_count(env, "COBALT_PARTSIZE");
      job->default_site = "thetagpu";
    }
    return job;
  }
  std::vector<std::string> launchers() const override { return {"mpirun"}; }
  std::string template_name() const override { return "cobalt.sh.tmpl"; }
  // Cobalt has no requeue of its own; a dependency runs the continuation after this job ends.
  std::string requeue_command() const override {
    return qsub_continuation("--dependencies \"$COBALT_JOBID\"", "--env");
  }
  bool output_from_script() const override { return true; }
  std::string no_signal_before_walltime() const override {
    return "Cobalt sends no signal before the walltime";
  }

  std::vector<std::string> directives(const JobSpec& spec, const SiteProfile& site,
                                      const JobShape& s) const override {
    std::vector<std::string> d = {"-n " + std::to_string(s.nodes)};
    if (spec.walltime_seconds) d.push_back("-t " + cobalt_minutes(*spec.walltime_seconds));
    if (!s.queue.empty()) d.push_back("-q " + s.queue);
    if (!spec.account.empty()) d.push_back("-A " + spec.account);
    const auto& fs = filesystems_or_default(spec, site);
    if (!fs.empty()) d.push_back("--attrs filesystems=" + join(fs, ","));
    d.push_back("--jobname " + spec.name);
    for (const auto& extra : spec.directives) d.push_back(extra);
    return prefixed(std::move(d), "#COBALT ");
  }

  void add_launcher(const PlanDraft& d, TemplateValues& values) const override {
    values["launcher"] = mpirun_launcher(d, "-hostfile \"$COBALT_NODEFILE\"");
  }

  Argv status_command(const std::string& job_id) const override { return {"qstat", job_id}; }

  // A table: "JobID  User  WallTime  Nodes  State  Location", a rule of '=', then one row.
  std::optional<JobStatus> parse_status(std::string_view output) const override {
    std::istringstream in{std::string(output)};
    std::string line;
    std::vector<std::string> header;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::vector<std::string> fields;
      for (std::string w; words >> w;) fields.push_back(w);
      if (fields.empty() || fields[0].find_first_not_of('=') == std::string::npos) continue;
      if (header.empty()) {
        header = fields;
        continue;
      }
      const auto col = std::find(header.begin(), header.end(), "State");
      const auto index = static_cast<std::size_t>(col - header.begin());
      if (col == header.end() || index >= fields.size()) return std::nullopt;
      JobStatus status;
      status.state = fields[index];
      status.running = status.state == "running";
      // Cobalt forgets a job as soon as it ends; "exiting" is the last state it shows.
      status.finished = status.state == "done" || status.state == "killing";
      return status;
    }
    return std::nullopt;
  }

  // qstat prints no row, and succeeds, for a job it no longer knows.
  bool forgot_job(std::string_view text, int exit_status) const override {
    return BatchScriptAdapter::forgot_job(text, exit_status) || exit_status == 0;
  }
};

}  // namespace

const SchedulerAdapter& cobalt_adapter() {
  static const Cobalt adapter;
  return adapter;
}

}  // namespace dtrain::plan
