// Everything dtrain knows about one scheduler sits behind this interface, one file per scheduler
// (slurm.cpp, pbspro.cpp, pbs.cpp, cobalt.cpp, local.cpp, k8s.cpp), so the planner and
// `dtrain submit` never switch on the scheduler. plan() (plan/planner.hpp) builds what every job
// shares (rank map, environment, exports, setup, the bind and run-rank words) and asks the adapter
// for the rest: the job's shape on the site, its header fields, the script or manifest, and the
// commands that submit, release, cancel and query the job and the parsers for what they print.
// Pure: `dtrain submit` runs the commands and hands their output here, so every scheduler's quirks
// are unit-tested without a scheduler.
//
// Adding a scheduler (LSF, Flux) is one new file here plus its template: `<name>.cpp` with a class
// derived from BatchScriptAdapter (schedulers/batch_script.hpp: directives, template name,
// launcher, requeue command, the submit/release/cancel/status commands and their parsers) and a
// `templates/<name>.sh.tmpl`. A site profile names its scheduler by the adapter's name, so nothing
// else names a scheduler: the shared skeleton, the site-profile reader (which takes the scheduler
// words and the launchers each supports from the registry), the CLI's submit and wait loops and
// plan.json need no change. A built-in adapter's accessor is listed in adapters.hpp so that the
// registry (scheduler.cpp) lists the words in a fixed order; any other registers itself with
// register_scheduler().
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "launch/launcher_env.hpp"
#include "plan/job_spec.hpp"
#include "plan/planner.hpp"
#include "plan/site_profile.hpp"

namespace dtrain::plan {

using Argv = std::vector<std::string>;
using Env = std::vector<std::pair<std::string, std::string>>;

// A node the scheduler reports down, failing, not responding or drained.
struct NodeFailure {
  std::string name;    // "node2"
  std::string state;   // the scheduler's word: "down*", "idle*" (Slurm: '*' = not responding)
  std::string reason;  // why, when the scheduler says: "Not responding"; "" when it does not
};

// The nodes a running job was given, as its environment names them.
struct Allocation {
  std::string nodelist;  // as the scheduler writes them ("node[1-3]"); its queries take it
  std::vector<std::string> nodes;  // one name each, in the scheduler's order
};

// The allocation a shell already holds on a scheduler (salloc, qsub -I, a batch job), as its
// environment describes it (plan/allocation.hpp gathers it from every adapter).
struct HeldJob {
  std::string id;            // "1234", "5678.polaris-pbs-01"
  std::optional<int> nodes;  // its node count, when a variable says
  std::string node_file;     // a file whose distinct lines are its nodes, when that says
  std::string default_site;  // the built-in site of a job without --site; "" for none
};

// A node of an elastic job's allocation that the job cannot run on any more.
struct LostNode {
  std::string name;   // "node2"
  std::string state;  // "DOWN", "FAIL", "NOT_RESPONDING"
};

struct JobStatus {
  std::string state;  // the scheduler's word: PENDING, RUNNING, COMPLETED, ... or Q, R, C, F ...
  bool running = false;
  bool finished = false;
  std::optional<int> exit_status;  // when the scheduler says; 128 + N for signal N
  std::string reason;              // why it waits or failed, when the scheduler says
  std::string nodes;               // the job's nodes as the scheduler writes them ("node[1-2]")
  bool node_failed = false;        // it ended because one of its nodes failed (Slurm NODE_FAIL)
  bool walltime_reached = false;   // the scheduler stopped it at its time limit (Slurm TIMEOUT)
};

// How `dtrain submit` hands a plan to the scheduler.
enum class Submission {
  kRunHere,       // the script runs now, on this machine (local)
  kHeldBatchJob,  // submitted held, its run directory renamed after the job id, then released
  kManifest,      // the manifest is created (kubectl); the job is followed with the cluster's tools
};

class SchedulerAdapter {
 public:
  virtual ~SchedulerAdapter() = default;

  // The word a site profile's `scheduler:` names it by; unique in the registry.
  virtual std::string_view name() const = 0;
  // The launchers its script knows how to drive (a site profile's `launcher:`).
  virtual std::vector<std::string> launchers() const = 0;
  virtual Submission submission() const = 0;

  // --- Planning: plan() calls these in this order.
  // The job's shape on the site; throws SpecError naming every problem the spec has there.
  virtual JobShape shape(const JobSpec& spec, const std::string& spec_source,
                         const SiteProfile& site) const;
  // The header fields only the scheduler knows: plan.job_id, plan.run_dir (and plan.site).
  virtual void frame(PlanDraft& draft) const = 0;
  // The host of node `node` when known before the job runs; "" when the scheduler picks it.
  virtual std::string host(const PlanDraft& draft, int node) const;
  // The spec fields this scheduler cannot honour, and the warning's words before "; ignoring".
  virtual std::vector<std::string> ignored_fields(const JobSpec& spec) const;
  virtual std::string ignoring(const SiteProfile& site) const;
  // Warnings of its own after the ignored fields; may relax draft.cpu when it cannot be honoured.
  virtual void check(PlanDraft& draft) const;
  // dtrain's variables (DTRAIN_*) in the plan's env, after the site's and the spec's; empty when
  // the script sets them itself from the scheduler's (the job id is known only in the job).
  virtual Env dtrain_variables(const PlanDraft& draft) const;
  // The dtrain the ranks call back into.
  virtual std::string dtrain_exe(const PlanDraft& draft) const;
  // Writes draft.plan.script (and script_name): the batch script, launch script or manifest.
  virtual void write(PlanDraft& draft) const = 0;

  // --- Submission (kHeldBatchJob and kManifest). Each throws std::logic_error when the scheduler
  // has no such command.
  // Submits `script` held, so dtrain can name the run directory after the job id before the job
  // can start: sbatch --hold --parsable, qsub -h.
  virtual Argv submit_held_command(const std::string& script) const;
  // Submits `manifest` (kubectl create -f).
  virtual Argv submit_command(const std::string& manifest) const;
  // What the submit command printed -> the job id ("123", "123.server") or created object
  // ("mpijob.kubeflow.org/pi"). Throws SubmitError quoting the output when it is not there.
  virtual std::string parse_submitted(std::string_view output) const;
  virtual Argv release_command(const std::string& job_id) const;
  virtual Argv cancel_command(const std::string& job_id) const;
  // Prints the job's state (scontrol show job -o, qstat -f, ...).
  virtual Argv status_command(const std::string& job_id) const;
  // Parses status_command's output. `nullopt` when the scheduler no longer knows the job or the
  // query failed; forgot_job() tells which.
  virtual std::optional<JobStatus> parse_status(std::string_view output) const;
  // Whether status_command's output (`text`: its stdout and stderr) and exit status say the
  // scheduler no longer knows the job (it ended long enough ago to be purged).
  virtual bool forgot_job(std::string_view text, int exit_status) const;
  // After a job ended with node_failed: the command that lists which of its `nodes` are down and
  // why; empty when the scheduler has none.
  virtual Argv failed_nodes_command(const std::string& nodes) const;
  // One per failed node, each once, from failed_nodes_command's output.
  virtual std::vector<NodeFailure> parse_node_failures(std::string_view output) const;
  // "node2 (Not responding)", one per failed node: what `dtrain submit --wait` prints.
  std::vector<std::string> parse_failed_nodes(std::string_view output) const;

  // --- Elastic restarts (`nodes: MIN..MAX`, docs/fault-tolerance.md): everything `dtrain
  // supervise --min-nodes` (cli/cmd_supervise.cpp) needs to carry a job on inside its allocation
  // without the nodes it lost. Planning refuses an elastic range where can_shrink() is false, and
  // supervise asks it first; an adapter that returns true implements the five below, which
  // otherwise throw std::logic_error. Only Slurm so far: a PBS or Cobalt range is one more
  // adapter implementing them (and the directive that keeps the allocation when a node dies).
  virtual bool can_shrink() const { return false; }
  // The running job's nodes, from the environment its batch script runs in. Throws InputError
  // naming the variable when it is missing (not inside such a job) or malformed.
  virtual Allocation allocation(const launch::Environment& env) const;
  // The command that lists which of the allocation's nodes are unusable, and its output -> the
  // nodes the job cannot run on any more, each once, in the order listed.
  virtual Argv lost_nodes_command(const Allocation& allocation) const;
  virtual std::vector<LostNode> parse_lost_nodes(std::string_view output) const;
  // The job script's launch `argv` rewritten to run on `nodes` nodes without `exclude` (every
  // node lost so far), the ranks per node unchanged, so the world shrinks with the nodes. Works
  // on its own output too. Throws InputError when `argv` is not a launch it can rewrite.
  virtual Argv shrink_launch(const Argv& argv, int nodes,
                             const std::vector<std::string>& exclude) const;
  // The variables of the batch script's environment that a shrunk launch must not inherit: the
  // launcher would take them over the node count it is given.
  virtual std::vector<std::string> shrunk_launch_unset() const;

  // --- Inside an allocation (`dtrain run`, `dtrain submit --here`): the job script runs at once
  // in the allocation the shell holds, its launcher on the allocation's nodes. The variable that
  // names such an allocation's job ("" when the scheduler has none), and what the environment
  // says of it (nullopt when the variable is unset or empty). Throws InputError naming a variable
  // whose node count is no number.
  virtual std::string_view held_job_variable() const { return {}; }
  virtual std::optional<HeldJob> held_job(const launch::Environment& env) const;

 protected:
  [[noreturn]] void unsupported(const char* what) const;
};

// The adapter of `site`'s scheduler. Throws std::logic_error when none is registered under its
// name (parse_site_profile accepts only registered names: a bug).
const SchedulerAdapter& scheduler_of(const SiteProfile& site);
// nullptr when no adapter has this name.
const SchedulerAdapter* scheduler_adapter(std::string_view name);
// Every adapter's name, in the registry's order (the words `scheduler:` accepts): the built-in
// ones, then the registered ones in the order they registered.
std::vector<std::string> scheduler_names();
// Adds `adapter` (which must outlive every use) to the registry, after the built-in ones; call it
// before planning starts, e.g. from a static object's constructor. Throws std::logic_error when
// its name is taken.
void register_scheduler(const SchedulerAdapter& adapter);

// The number alone ("123" of "123.server"), as the job script's DTRAIN_JOB_ID spells it.
std::string job_number(std::string_view job_id);

// A scheduler command failed or answered something dtrain cannot read.
class SubmitError : public Failure {
 public:
  using Failure::Failure;
};

}  // namespace dtrain::plan
