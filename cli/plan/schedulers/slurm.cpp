// Slurm: sbatch directives, srun (or the SPANK plugin) as the launcher, scontrol and sinfo.
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
};

}  // namespace

const SchedulerAdapter& slurm_adapter() {
  static const Slurm adapter;
  return adapter;
}

}  // namespace dtrain::plan
