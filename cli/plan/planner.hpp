// Spec + site profile + run inputs -> LaunchPlan, for every scheduler. plan() builds once what
// every job shares (the header fields, the rank map, the warnings, the environment and its export
// lines, the setup block, the `dtrain bind` and `dtrain run-rank` words) and hands the draft to
// the site's scheduler adapter (plan/schedulers/scheduler.hpp), which writes the script or the
// manifest. Pure: everything it needs (job id, paths, the templates, this machine) is passed in,
// so the same inputs give the same script.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/job_spec.hpp"
#include "plan/launch_plan.hpp"
#include "plan/site_profile.hpp"

namespace dtrain::plan {

// Facts about the machine a local run starts on.
struct LocalMachine {
  std::string hostname = "localhost";
  int cores = 1;
  bool is_root = false;
};

struct PlanInputs {
  std::string job_id;      // a local run's id; a batch job's comes from the scheduler
  std::string run_dir;     // absolute; a local run's (batch sites name theirs from the job id)
  std::string workdir;     // absolute; the job runs there, as sbatch jobs run in the submit dir
  std::string dtrain_exe;  // absolute path of the dtrain executable ranks call back into
  std::string version;
  LocalMachine machine;  // read only for a site that runs the job here
};

// Returns the text of templates/<name>.
using TemplateLookup = std::function<std::string_view(std::string_view name)>;

// The resource shape of one node of the job, after the site's defaults are applied.
struct JobShape {
  int nodes = 1;
  int ranks_per_node = 1;
  int gpus_per_rank = 0;
  int cpus_per_rank = 0;  // 0: leave it to the scheduler
  std::string queue;      // the spec's, or the site's default that fits (plan/queue_rules.hpp)
};

// Throws SpecError naming every field the site requires and the spec lacks, every request beyond
// the site's node (more GPUs or CPUs per node than it has) and every queue limit the job breaks.
JobShape job_shape(const JobSpec& spec, const std::string& spec_source, const SiteProfile& site);

// `<workdir>/runs/<name>-<id>`: where a job's run directory is when its spec names none.
std::string default_run_dir(const std::string& workdir, const std::string& name,
                            const std::string& id);

// The words each rank runs: the spec's words, or `bash -c LINE` for a command line string.
std::vector<std::string> rank_command(const JobSpec& spec);

// The affinity policies and the framework as flags of `dtrain bind` (prefix "--") or of the SPANK
// plugin ("--dtrain-"); `cpu` is the CPU policy to pass (the spec's, unless the planner had to
// relax it).
std::vector<std::string> bind_policy_flags(const JobSpec& spec, const std::string& prefix,
                                           affinity::CpuPolicy cpu);

// The words before a launch that send the checkpoint signal `seconds` (a shell word) after it
// starts: GNU timeout, which with --preserve-status exits with the launch's own status and with
// --foreground signals the launch alone (as Slurm's --signal=B: signals the batch shell alone),
// which passes it on to the ranks; without it timeout would signal its whole process group, and
// a helper there that does not handle the signal would die of it.
std::string checkpoint_timer(const CheckpointSpec& checkpoint, const std::string& seconds);

// The spec fields only a Kubernetes site uses (image, namespace) that the spec sets: the other
// sites name them in a warning rather than drop them silently.
std::vector<std::string> kubernetes_only_fields(const JobSpec& spec);

// The spec's `setup` lines as the job script runs them, "" without any: with the options of a
// plain batch script (`set +e +u +o pipefail`, then the script's `set -euo pipefail` again), since
// `conda activate` and site scripts stop under -eu. Setup runs once, before `dtrain supervise`
// starts the first attempt and exports each attempt's number, so the lines run with
// DTRAIN_ATTEMPT=0 (docs/spec.md).
std::string setup_lines(const JobSpec& spec);

// What plan() builds for every scheduler before the adapter writes the script.
struct PlanDraft {
  const JobSpec& spec;
  const std::string& spec_source;
  const SiteProfile& site;
  const PlanInputs& inputs;
  const TemplateLookup& templates;
  JobShape shape;
  LaunchPlan plan;                    // header, rank map, warnings, env
  affinity::CpuPolicy cpu{};          // the CPU policy the ranks are bound with
  std::string exports;                // `export NAME=VALUE` lines of plan.env
  std::string setup;                  // "\n# setup from the job spec\n" + modules and lines, or ""
  std::vector<std::string> bind;      // DTRAIN bind <policy flags> --
  std::vector<std::string> run_rank;  // DTRAIN run-rank -- <command>
  // "DTRAIN supervise --restarts N --backoff S -- " before the launch when the spec asks for
  // restarts (docs/fault-tolerance.md), else "": scripts without restarts stay as they were.
  std::string supervise;
  // "DTRAIN note-lost-rank --run-dir": after a failed launch the script has it give each rank
  // the launcher ended before it heard which rank was lost the line another rank wrote.
  std::string note_lost_rank;
  // "DTRAIN launch-status --run-dir": prints the status a checkpointed job acts on after its
  // launch, 85 when the ranks' logs say they stopped for a requeue though the launcher did not.
  std::string launch_status;
};

// Throws SpecError when the spec misses a field the site requires or asks for what the site
// cannot give (see each adapter's shape()).
LaunchPlan plan(const JobSpec& spec, const std::string& spec_source, const SiteProfile& site,
                const PlanInputs& inputs, const TemplateLookup& templates);

}  // namespace dtrain::plan
