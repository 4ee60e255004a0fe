// Slurm: sbatch directives, srun (or the SPANK plugin) as the launcher, scontrol and sinfo, and
// an elastic job's restarts (its nodes, the lost ones, the next srun without them).
#include <algorithm>
#include <array>
#include <sstream>

#include "plan/render.hpp"
#include "plan/schedulers/adapters.hpp"
#include "plan/schedulers/batch_script.hpp"
#include "records/run_dir_layout.hpp"

namespace dtrain::plan {
namespace {

// "Key=Value" words of `scontrol show job -o`; values never contain spaces except Command= and
// the like, which come after the fields read here.
std::optional<std::string> slurm_field(std::string_view line, std::string_view key) {
  std::size_t pos = 0;
  while (pos < line.size()) {
    const std::size_t end = std::min(line.find_first_of(" \t\n", pos), line.size());
    const std::string_view word = line.substr(pos, end - pos);
    if (word.size() > key.size() && word.substr(0, key.size()) == key && word[key.size()] == '=') {
      return std::string(word.substr(key.size() + 1));
    }
    pos = end + 1;
  }
  return std::nullopt;
}

// "EXIT:SIGNAL" -> the status a shell would report.
std::optional<int> exit_status(const std::string& code, const std::string& state) {
  const auto colon = code.find(':');
  const auto exit = to_int(std::string_view(code).substr(0, colon));
  const auto signal = colon == std::string::npos ? std::optional<int>(0)
                                                 : to_int(std::string_view(code).substr(colon + 1));
  if (!exit || !signal) return std::nullopt;
  int value = *signal > 0 ? 128 + *signal : *exit;
  // A job Slurm ended (cancelled, out of time) without a status of its own still failed.
  if (value == 0 && state != "COMPLETED") value = 1;
  return value;
}

// "123;cluster" (sbatch --parsable on a federation), "Submitted batch job 123" when a wrapper
// dropped --parsable.
std::string_view strip_sbatch(std::string_view text) {
  std::string_view id = text.substr(0, text.find(';'));
  if (auto sp = id.rfind(' '); sp != std::string_view::npos) id = id.substr(sp + 1);
  return id;
}

class Slurm final : public BatchScriptAdapter {
 public:
  std::string_view name() const override { return "slurm"; }
  std::vector<std::string> launchers() const override { return {"srun", "mpirun"}; }
  std::string template_name() const override { return "slurm.sh.tmpl"; }
  bool can_shrink() const override { return true; }

  std::string_view held_job_variable() const override { return "SLURM_JOB_ID"; }
  std::optional<HeldJob> held_job(const launch::Environment& env) const override {
    auto job = SchedulerAdapter::held_job(env);
    if (!job) return job;
    job->nodes = env_node_count(env, "SLURM_JOB_NUM_NODES");
    if (!job->nodes) job->nodes = env_node_count(env, "SLURM_NNODES");
    job->default_site = "slurm";
    return job;
  }
  std::string requeue_command() const override { return "scontrol requeue \"$SLURM_JOB_ID\""; }

  std::vector<std::string> directives(const JobSpec& spec, const SiteProfile& site,
                                      const JobShape& s) const override {
    std::vector<std::string> d = {"--job-name=" + spec.name, "--nodes=" + std::to_string(s.nodes),
                                  "--ntasks-per-node=" + std::to_string(s.ranks_per_node)};
    if (s.gpus_per_rank > 0) {
      d.push_back("--gpus-per-node=" + std::to_string(s.gpus_per_rank * s.ranks_per_node));
    } else if (site.gpus_per_node > 0) {
      d.push_back("--gpus-per-node=" + std::to_string(site.gpus_per_node));
    }
    if (s.cpus_per_rank > 0) d.push_back("--cpus-per-task=" + std::to_string(s.cpus_per_rank));
    if (spec.walltime_seconds) d.push_back("--time=" + slurm_time(*spec.walltime_seconds));
    if (!spec.account.empty()) d.push_back("--account=" + spec.account);
    if (!s.queue.empty()) d.push_back("--qos=" + s.queue);
    if (!spec.partition.empty()) d.push_back("--partition=" + spec.partition);
    if (!site.constraint.empty()) d.push_back("--constraint=" + site.constraint);
    // Inside the run directory, which `dtrain submit` has renamed after the job id before it
    // releases the job, so it exists when slurmd opens the file.
    d.push_back("--output=" + (spec.run_dir.empty() ? "runs/" + spec.name + "-%j" : spec.run_dir) +
                "/" + records::batch_output_prefix(spec.name) + "%j" +
                std::string(records::kBatchOutputExtension));
    if (spec.checkpoint.enabled) {
      // B: signals only the batch shell, which forwards it to srun (see run_launch_checkpoint).
      d.push_back("--signal=B:" + spec.checkpoint.signal + "@" +
                  std::to_string(spec.checkpoint.grace_seconds));
      if (spec.checkpoint.requeue) d.push_back("--requeue");
    }
    // Slurm's default (JobRequeue=1) starts a batch job over after a node failure: from step 0
    // when the job cannot resume, into the same run directory. Only a job that asks is requeued.
    if (!(spec.checkpoint.enabled && spec.checkpoint.requeue)) d.push_back("--no-requeue");
    // Slurm ends a job whose node fails unless told not to; an elastic job carries on without it.
    if (spec.min_nodes > 0) d.push_back("--no-kill");
    for (const auto& extra : spec.directives) d.push_back(extra);
    return prefixed(std::move(d), "#SBATCH ");
  }

  void add_launcher(const PlanDraft& d, TemplateValues& values) const override {
    const JobShape& s = d.shape;
    std::string srun_flags;
    if (!d.site.srun_mpi.empty()) srun_flags += " --mpi=" + d.site.srun_mpi;
    srun_flags += " --nodes=" + std::to_string(s.nodes) +
                  " --ntasks-per-node=" + std::to_string(s.ranks_per_node);
    // Since Slurm 22.05 srun no longer inherits --cpus-per-task from the batch allocation.
    if (s.cpus_per_rank > 0) srun_flags += " --cpus-per-task=" + std::to_string(s.cpus_per_rank);
    // With restarts, a rank that fails ends the step at once (as mpirun does), so the next
    // attempt does not wait for ranks stuck in a collective with it (docs/fault-tolerance.md).
    if (d.spec.restarts > 0) srun_flags += " --kill-on-bad-exit=1";
    std::vector<std::string> plugin = {"--dtrain"};
    for (auto& f : bind_policy_flags(d.spec, "--dtrain-", d.cpu)) plugin.push_back(std::move(f));
    values["srun_flags"] = srun_flags;
    values["plugin_flags"] = shell_join(plugin);
  }

  Argv submit_held_command(const std::string& script) const override {
    return {"sbatch", "--hold", "--parsable", script};
  }
  std::string parse_submitted(std::string_view output) const override {
    return parse_job_id_line(output, strip_sbatch, "\"123\"");
  }
  Argv release_command(const std::string& job_id) const override {
    return {"scontrol", "release", job_id};
  }
  Argv cancel_command(const std::string& job_id) const override { return {"scancel", job_id}; }
  Argv status_command(const std::string& job_id) const override {
    return {"scontrol", "show", "job", "-o", job_id};
  }

  std::optional<JobStatus> parse_status(std::string_view output) const override {
    const auto state = slurm_field(output, "JobState");
    if (!state) return std::nullopt;
    JobStatus status;
    status.state = *state;
    // States a job leaves only by ending; REQUEUED and friends go back to PENDING.
    static constexpr std::array<std::string_view, 10> kDone = {
        "COMPLETED", "CANCELLED", "FAILED",   "TIMEOUT",       "NODE_FAIL",
        "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "REVOKED"};
    status.finished = std::find(kDone.begin(), kDone.end(), status.state) != kDone.end();
    status.running = status.state == "RUNNING";
    if (auto reason = slurm_field(output, "Reason"); reason && *reason != "None") {
      status.reason = *reason;
    }
    if (auto nodes = slurm_field(output, "NodeList"); nodes && *nodes != "(null)") {
      status.nodes = *nodes;
    }
    status.node_failed = status.state == "NODE_FAIL";
    status.walltime_reached = status.state == "TIMEOUT";
    if (auto code = slurm_field(output, "ExitCode"); code && status.finished) {
      status.exit_status = exit_status(*code, status.state);
    }
    return status;
  }

  Argv failed_nodes_command(const std::string& nodes) const override {
    if (nodes.empty()) return {};
    // One line per node that is down, failing or not answering: "node2|down*|Not responding".
    return {"sinfo", "-h", "-N", "-n", nodes, "-t", "down,fail,no_respond,drain", "-o", "%N|%T|%E"};
  }

  std::vector<NodeFailure> parse_node_failures(std::string_view output) const override {
    std::vector<NodeFailure> out;
    std::istringstream in{std::string(output)};
    for (std::string line; std::getline(in, line);) {
      std::string_view rest = trim(line);
      if (rest.empty()) continue;
      auto next = [&rest] {
        const auto bar = rest.find('|');
        const std::string_view word = trim(rest.substr(0, bar));
        rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
        return std::string(word);
      };
      NodeFailure node;
      node.name = next();
      node.state = next();
      node.reason = next();
      if (node.reason == "none") node.reason.clear();  // sinfo's empty reason
      // sinfo -N lists a node once per partition it is in.
      const bool seen = std::any_of(out.begin(), out.end(),
                                    [&](const NodeFailure& n) { return n.name == node.name; });
      if (!seen) out.push_back(std::move(node));
    }
    return out;
  }

  Allocation allocation(const launch::Environment& env) const override {
    const auto list = env.find("SLURM_JOB_NODELIST");
    if (list == env.end() || list->second.empty()) {
      throw InputError(
          "dtrain: supervise: --min-nodes needs SLURM_JOB_NODELIST (it runs inside a Slurm job)");
    }
    return {list->second, launch::expand_hostlist(list->second, "SLURM_JOB_NODELIST")};
  }

  Argv lost_nodes_command(const Allocation& allocation) const override {
    return failed_nodes_command(allocation.nodelist);
  }

  // Down, failing, or not responding (sinfo's '*'); a drained node still runs a job's steps.
  std::vector<LostNode> parse_lost_nodes(std::string_view output) const override {
    std::vector<LostNode> out;
    for (const auto& f : parse_node_failures(output)) {
      std::string base = f.state;
      const bool silent = !base.empty() && base.back() == '*';
      if (silent) base.pop_back();
      if (base == "down") {
        out.push_back({f.name, "DOWN"});
      } else if (base == "fail" || base == "failing") {
        out.push_back({f.name, "FAIL"});
      } else if (silent) {
        out.push_back({f.name, "NOT_RESPONDING"});
      }
    }
    return out;
  }

  // srun OPTIONS... PROGRAM ARGS...: its `--nodes=N` becomes `--nodes=<nodes>`, followed by
  // `--exclude=a,b --overlap` when `exclude` is not empty; --ntasks-per-node stays. Only srun's
  // own options are touched (those before the program).
  Argv shrink_launch(const Argv& argv, int nodes,
                     const std::vector<std::string>& exclude) const override {
    const std::string program = argv.empty() ? "" : argv[0].substr(argv[0].rfind('/') + 1);
    if (program != "srun") {
      throw InputError(
          "dtrain: supervise: --min-nodes needs an srun launch to run on fewer nodes, got \"" +
          (argv.empty() ? std::string() : argv[0]) + "\"");
    }
    Argv out = {argv[0]};
    bool replaced = false;
    std::size_t i = 1;
    for (; i < argv.size() && argv[i].starts_with("-"); ++i) {
      // Replaced by those below.
      if (argv[i].starts_with("--exclude=") || argv[i] == "--overlap") continue;
      if (argv[i].starts_with("--nodes=") && !replaced) {
        out.push_back("--nodes=" + std::to_string(nodes));
        if (!exclude.empty()) {
          out.push_back("--exclude=" + join(exclude, ","));
          // The failed attempt's step stays in Slurm's books, holding its CPUs on the nodes left,
          // until the lost node answers (it may never): without --overlap the new step waits for
          // them ("step creation temporarily disabled ... Requested nodes are busy").
          out.push_back("--overlap");
        }
        replaced = true;
        continue;
      }
      out.push_back(argv[i]);
    }
    if (!replaced) {
      throw InputError(
          "dtrain: supervise: --min-nodes needs the srun launch's --nodes=N among its options, "
          "found none");
    }
    out.insert(out.end(), argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end());
    return out;
  }

  // srun takes the batch step's task count (an input variable of srun's) over the --nodes and
  // --ntasks-per-node it is given.
  std::vector<std::string> shrunk_launch_unset() const override {
    return {"SLURM_NTASKS", "SLURM_NPROCS"};
  }
};

}  // namespace

const SchedulerAdapter& slurm_adapter() {
  static const Slurm adapter;
  return adapter;
}

}  // namespace dtrain::plan
