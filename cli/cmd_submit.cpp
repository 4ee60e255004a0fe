// `dtrain submit SPEC [--dry-run] [--wait] [--here]`: spec -> plan -> run directory -> launch
// (job_launch.hpp). For the local site the job runs now, in the foreground, and its exit status
// is dtrain's; batch sites get sbatch/qsub, and --wait follows the job to its end and returns its
// exit status; --here runs a batch site's script now, in the allocation this shell holds.
#include <CLI/CLI.hpp>
#include <memory>

#include "commands.hpp"
#include "common/errors.hpp"
#include "job_launch.hpp"
#include "plan/allocation.hpp"
#include "planning.hpp"

namespace dtrain::cli {
namespace {

struct SubmitOptions {
  std::string spec_path;
  bool dry_run = false;
  bool no_rank_prefix = false;
  bool wait = false;
  bool here = false;
  std::string site;
  std::vector<std::string> overrides;
};

int run_submit(const SubmitOptions& opts) {
  LaunchOptions launch{"submit", opts.dry_run, opts.wait, std::nullopt, !opts.no_rank_prefix};
  if (opts.here) {
    launch.allocation = this_allocation();
    if (!launch.allocation) {
      throw UsageError("dtrain: submit: --here: this shell holds no allocation (none of " +
                       plan::allocation_variables() +
                       " is set); expected to run inside `salloc`, `qsub -I` or a batch job, or "
                       "leave --here out to submit a new job");
    }
  }
  PlannedJob job = plan_from_file(opts.spec_path, opts.site, opts.overrides,
                                  {launch.allocation ? launch.allocation->id : ""});
  return launch_planned(job, launch);
}

}  // namespace

void register_submit(CLI::App& app, Action& action) {
  auto opts = std::make_shared<SubmitOptions>();
  auto* cmd = app.add_subcommand("submit", "Plan a job from its spec and run or submit it");
  cmd->add_option("spec", opts->spec_path, "Job spec (YAML)")->required();
  cmd->add_flag("--dry-run", opts->dry_run, "Print the launch script; write and run nothing");
  cmd->add_flag(
      "--no-rank-prefix", opts->no_rank_prefix,
      "On a terminal, show the ranks' lines as they are, without \"[RANK] \" before each");
  cmd->add_flag("--wait", opts->wait,
                "Batch sites: follow the job to its end (state, time, steps/s) and return its "
                "exit status");
  cmd->add_option("--set", opts->overrides,
                  "Override a spec field: KEY=VALUE (VALUE is YAML; KEY may be a.b)");
  cmd->add_option("--site", opts->site, "Run on this site instead of the spec's");
  cmd->add_flag("--here", opts->here,
                "Run the batch site's job script now in the allocation this shell holds (salloc, "
                "qsub -I, a batch job), with its launcher on its nodes, instead of submitting a "
                "new job");
  cmd->callback([opts, &action] { action = [opts] { return run_submit(*opts); }; });
}

}  // namespace dtrain::cli
