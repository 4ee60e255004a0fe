// What the batch schedulers that run a job script (Slurm, PBS Pro, PBS, Cobalt; LSF and Flux
// would too) have in common: the script is templates/<scheduler>.sh.tmpl filled with the
// scheduler's directives, its launcher and the shared parts of the plan, the run directory is
// named after the job id the scheduler gives, and the job is submitted held. A scheduler adds
// only what differs (directives, template, launcher, requeue command, its commands and parsers).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/schedulers/scheduler.hpp"

namespace dtrain::plan {

using TemplateValues = std::map<std::string, std::string>;

class BatchScriptAdapter : public SchedulerAdapter {
 public:
  Submission submission() const override { return Submission::kHeldBatchJob; }
  void frame(PlanDraft& draft) const override;
  std::vector<std::string> ignored_fields(const JobSpec& spec) const override;
  // Warns when the job script has to time the checkpoint signal and the spec gives no walltime.
  void check(PlanDraft& draft) const override;
  std::string ignoring(const SiteProfile& site) const override;
  void write(PlanDraft& draft) const override;
  // "Invalid job id" (Slurm), "Unknown Job" (PBS).
  bool forgot_job(std::string_view text, int exit_status) const override;

  // The script's directive lines ("#SBATCH --nodes=2", ...), the spec's own last.
  virtual std::vector<std::string> directives(const JobSpec& spec, const SiteProfile& site,
                                              const JobShape& shape) const = 0;
  virtual std::string template_name() const = 0;
  // The template's launcher placeholders ({{launcher}}, or Slurm's {{srun_flags}} and
  // {{plugin_flags}}): how the script starts the ranks.
  virtual void add_launcher(const PlanDraft& draft, TemplateValues& values) const = 0;
  // The shell lines that put the job back in the queue after a rank exits kExitRequeue, as an
  // ordinary user may (no operator privileges): they run, indented, before the script exits 0.
  virtual std::string requeue_command() const = 0;
  // "" when the scheduler signals a job before its walltime when asked (Slurm's --signal);
  // otherwise what it does instead ("PBS Pro sends no signal before the walltime (...)"), and
  // the job script sends the checkpoint signal itself, `grace` seconds before the walltime.
  virtual std::string no_signal_before_walltime() const { return ""; }
  // Whether the script sends its own output to the run directory ({{output}}: `exec >>FILE`),
  // because the scheduler's output directive cannot name it (no job id in PBS's -o path).
  virtual bool output_from_script() const { return false; }
};

// The qsub family (PBS Pro, Torque/PBS, Cobalt): `qsub -h` submits held and prints the job id
// ("123" or "123.server", kept whole: qrls, qdel and qstat want it), qrls releases, qdel cancels.
// Each scheduler keeps its own status command and parser.
class QsubAdapter : public BatchScriptAdapter {
 public:
  Argv submit_held_command(const std::string& script) const override;
  std::string parse_submitted(std::string_view output) const override;
  Argv release_command(const std::string& job_id) const override;
  Argv cancel_command(const std::string& job_id) const override;
};

// The requeue of the qsub schedulers (PBS Pro's and Torque's qrerun needs operator privileges;
// Cobalt has none): `qsub DEPEND ENV_FLAG DTRAIN_REQUEUED_JOB_ID="$DTRAIN_JOB_ID" <run
// dir>/launch.sh`, the same script as a new job that starts once this one has ended, in the same
// run directory (the templates take DTRAIN_JOB_ID from DTRAIN_REQUEUED_JOB_ID when it is set). With
// a comment.
std::string qsub_continuation(const std::string& depend, const std::string& env_flag);

// The directives PBS Pro and Torque/PBS end with: queue, account, one output file (-j oe),
// rerunnable when the spec requeues, then the spec's own.
void add_pbs_tail_directives(const JobSpec& spec, const JobShape& shape,
                             std::vector<std::string>& directives);

// Helpers the batch adapters share.
// The walltime as the schedulers read it; parse_walltime() reads every one of them back to the
// same seconds (walltime_round_trip test), up to the 366 days the spec allows.
std::string hh_mm_ss(long seconds);    // hours past 24 as they are (PBS)
std::string slurm_time(long seconds);  // [D-]HH:MM:SS (sbatch --time)
std::string join(const std::vector<std::string>& items, const std::string& sep);
const std::vector<std::string>& filesystems_or_default(const JobSpec& spec,
                                                       const SiteProfile& site);
// Each line prefixed ("#PBS ").
std::vector<std::string> prefixed(std::vector<std::string> lines, const std::string& prefix);

// `mpirun -np W -npernode R <hostfile> -x NAME...`: Open MPI over the scheduler's hostfile
// (`hostfile`: the flag and its file, e.g. `--hostfile "$PBS_NODEFILE"`), with every variable the
// job script sets for the ranks named, since Open MPI starts remote ranks with its own only.
std::string mpirun_launcher(const PlanDraft& draft, const std::string& hostfile);

// The job id on the last non-empty line of a submit command's output (site wrappers print notices
// before it), once `strip` took off what the scheduler adds around it. Throws SubmitError quoting
// the output, with `example` ("\"123\"") saying what was expected.
std::string parse_job_id_line(std::string_view output, std::string_view (*strip)(std::string_view),
                              const std::string& example);
std::string_view trim(std::string_view s);
std::optional<int> to_int(std::string_view s);  // the whole of `s`, or nullopt

// The node count in variable `name` of an allocation's environment; nullopt when it is unset or
// empty. Throws InputError naming the variable and its value when that is no whole number from 1.
std::optional<int> env_node_count(const launch::Environment& env, std::string_view name);

// $PBS_NODEFILE of a PBS job's environment ("" when unset): its distinct lines are the nodes.
std::string pbs_node_file(const launch::Environment& env);

// `qstat -f` (PBS Pro, Torque/PBS): "key = value" lines.
std::optional<JobStatus> parse_qstat_full(std::string_view output);

}  // namespace dtrain::plan
