// The local site: the job runs now, on this machine, through Open MPI's mpirun; launch.sh is
// templates/local.sh.tmpl and the walltime is enforced as a scheduler would.
#include "common/job_signals.hpp"
#include "plan/render.hpp"
#include "plan/schedulers/adapters.hpp"
#include "records/run_dir_layout.hpp"

namespace dtrain::plan {
namespace {

// `dtrain submit` sends the checkpoint signals (the job signals that do not stop the job) to the
// job's process group (cli/process.hpp), and the walltime's `timeout` is in it: coreutils'
// timeout passes only the stopping ones on (TERM, INT, HUP, QUIT), and any other would end it,
// leaving the job without its time limit. So it ignores them, and the processes under it get
// them from the group (`dtrain supervise` and `dtrain run-rank` give what they start the default
// action of every job signal again).
std::string ignored_by_timeout() {
  std::string names;
  for (const JobSignal& s : kJobSignals) {
    if (!s.stops) names += " " + std::string(s.name);
  }
  return "\n# The walltime's `timeout` passes TERM, INT, HUP and QUIT on; the checkpoint signals, "
         "which\n# `dtrain submit` sends to the whole job, would end it: it ignores them.\n"
         "trap ''" +
         names + "\n";
}

class Local final : public SchedulerAdapter {
 public:
  std::string_view name() const override { return "local"; }
  std::vector<std::string> launchers() const override { return {"mpirun"}; }
  Submission submission() const override { return Submission::kRunHere; }

  // One node, this one; nothing is required of the spec.
  JobShape shape(const JobSpec& spec, const std::string&, const SiteProfile&) const override {
    JobShape s;
    s.ranks_per_node = spec.ranks_per_node_or(1);
    return s;
  }

  void frame(PlanDraft& d) const override {
    d.plan.site = d.spec.site;
    d.plan.job_id = d.inputs.job_id;
    d.plan.run_dir = d.inputs.run_dir;
  }

  std::string host(const PlanDraft& d, int) const override { return d.inputs.machine.hostname; }

  // Fields that only mean something to a batch scheduler or Kubernetes.
  std::vector<std::string> ignored_fields(const JobSpec& spec) const override {
    std::vector<std::string> out;
    if (!spec.account.empty()) out.emplace_back("account");
    if (!spec.queue.empty()) out.emplace_back("queue");
    if (!spec.partition.empty()) out.emplace_back("partition");
    if (!spec.filesystems.empty()) out.emplace_back("filesystems");
    if (!spec.directives.empty()) out.emplace_back("directives");
    for (auto& field : kubernetes_only_fields(spec)) out.push_back(std::move(field));
    return out;
  }
  std::string ignoring(const SiteProfile&) const override {
    return "site local runs on this machine";
  }

  void check(PlanDraft& d) const override {
    const int cores = d.inputs.machine.cores;
    if (d.cpu == affinity::CpuPolicy::kNuma && d.shape.ranks_per_node > cores) {
      d.cpu = affinity::CpuPolicy::kNone;
      d.plan.warnings.push_back("affinity.cpu numa needs a core per rank, and this machine has " +
                                std::to_string(cores) + " for " +
                                std::to_string(d.shape.ranks_per_node) +
                                " ranks; the ranks are not bound to cores");
    }
  }

  Env dtrain_variables(const PlanDraft& d) const override {
    Env env = {{"DTRAIN_JOB_ID", d.inputs.job_id}, {"DTRAIN_RUN_DIR", d.inputs.run_dir}};
    // The signals libdtrain's Preemption saves on, as the batch scripts export them.
    if (d.spec.checkpoint.enabled) {
      env.emplace_back("DTRAIN_PREEMPT_SIGNALS", d.spec.checkpoint.signal + ",TERM");
    }
    return env;
  }

  void write(PlanDraft& d) const override {
    const LocalMachine& machine = d.inputs.machine;
    std::vector<std::string> mpirun_flags;
    // Open MPI refuses to start as root unless told; containers and CI run as root.
    if (machine.is_root) mpirun_flags.emplace_back("--allow-run-as-root");
    // Open MPI counts one slot per core and refuses more ranks than slots.
    if (d.shape.ranks_per_node > machine.cores) mpirun_flags.emplace_back("--oversubscribe");
    // The walltime is enforced here as a scheduler would: TERM at the limit, KILL 30 s later;
    // and the checkpoint signal comes `grace` seconds before it, as Slurm's --signal sends it.
    // --foreground: timeout sends each signal to the launch (or its supervisor) once, and keeps
    // the job in the process group `dtrain submit` made for it; without it, timeout sends it to
    // the launch and again to its own group, and Open MPI's mpirun takes a second SIGTERM or
    // SIGINT for "die now", which can leave ranks running. `dtrain supervise` ties its launch's
    // life to its own, so the KILL that reaches only the supervisor ends the launch too.
    std::string time_limit;
    std::string checkpoint;
    std::string timeout_signals;
    if (d.spec.walltime_seconds) {
      const long walltime = *d.spec.walltime_seconds;
      time_limit =
          "timeout --foreground --signal=TERM --kill-after=30 " + std::to_string(walltime) + " ";
      timeout_signals = ignored_by_timeout();
      if (d.spec.checkpoint.enabled) {
        const CheckpointSpec& c = d.spec.checkpoint;
        const std::string at = std::to_string(walltime - c.grace_seconds);
        time_limit += checkpoint_timer(c, at);
        checkpoint = "\n# checkpoint: SIG" + c.signal +
                     " to the launch (which passes it on to the ranks) at " + at + " s,\n# " +
                     std::to_string(c.grace_seconds) + " s before the walltime (" +
                     std::to_string(walltime) + " s), so that they save and stop.\n";
      }
    }
    const std::map<std::string, std::string> values = {
        {"version", d.inputs.version},
        {"name", d.spec.name},
        {"world_size", std::to_string(d.plan.world_size())},
        {"workdir", shell_quote(d.inputs.workdir)},
        {"run_dir", shell_quote(d.inputs.run_dir)},
        {"env_exports", d.exports},
        {"mpirun_flags", mpirun_flags.empty() ? "" : " " + shell_join(mpirun_flags)},
        {"dtrain", shell_quote(d.inputs.dtrain_exe)},
        {"bind", shell_join(d.bind)},
        {"command", shell_join(d.plan.command)},
        {"setup", d.setup},
        {"time_limit", time_limit},
        {"checkpoint", checkpoint},
        {"supervise", d.supervise},
        {"timeout_signals", timeout_signals},
        {"script_file", std::string(records::kScriptFile)},
    };
    d.plan.script = render_template(d.templates("local.sh.tmpl"), values);
  }
};

}  // namespace

const SchedulerAdapter& local_adapter() {
  static const Local adapter;
  return adapter;
}

}  // namespace dtrain::plan
