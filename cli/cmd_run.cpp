// `dtrain run [-n RANKS] [--nodes N] [--framework F] [--restarts N] [--site S] PROGRAM ARGS...`:
// torchrun's habit without a spec. The flags become the spec a user would have written
// (plan/command_spec.hpp), which goes through the same planner, run directory, logs and report as
// `dtrain submit`'s (job_launch.hpp). Inside an allocation (salloc, qsub -I, a batch job) the
// job runs there, with the allocation's launcher on its nodes; elsewhere a batch site's job is
// submitted and followed to its end, and the local site runs it here.
#include <CLI/CLI.hpp>
#include <memory>

#include "commands.hpp"
#include "common/errors.hpp"
#include "common/words.hpp"
#include "flag_values.hpp"
#include "job_launch.hpp"
#include "launch/framework_env.hpp"
#include "plan/allocation.hpp"
#include "plan/command_spec.hpp"
#include "plan/job_spec.hpp"
#include "planning.hpp"

namespace dtrain::cli {
namespace {

// Where run's spec comes from, in messages about it ("dtrain run: ranks_per_node: ...").
constexpr const char* kSource = "(dtrain run's flags)";

struct RunOptions {
  plan::CommandJob job;
  bool dry_run = false;
  bool no_rank_prefix = false;
  std::vector<std::string> overrides;
};

int run_run(RunOptions opts) {
  LaunchOptions launch{"run", opts.dry_run, true, std::nullopt, !opts.no_rank_prefix};
  // Inside an allocation the job runs there, on a site of its scheduler (its built-in one unless
  // --site names another); --site local still means this machine alone.
  auto allocation = this_allocation();
  if (allocation) {
    if (opts.job.site.empty()) opts.job.site = allocation->default_site;
    const plan::SiteProfile site = resolve_site(opts.job.site);
    if (site.scheduler != "local") {
      // Before planning, which would first ask of the spec what the site requires.
      const std::string why = plan::site_mismatch(*allocation, site.name, site.scheduler);
      if (!why.empty()) throw UsageError("dtrain: run: " + why);
      if (!opts.job.nodes) opts.job.nodes = allocation->nodes;
      launch.allocation = std::move(allocation);
    }
  }
  plan::SpecOverrides overrides = plan::command_spec_overrides(opts.job);
  overrides.set = opts.overrides;
  PlannedJob job = plan_from_text(plan::command_spec_text(opts.job), kSource, overrides,
                                  {launch.allocation ? launch.allocation->id : ""});
  return launch_planned(job, launch);
}

}  // namespace

void register_run(CLI::App& app, Action& action) {
  auto opts = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand(
      "run",
      "Run PROGRAM ARGS... as a job without a spec (torchrun's habit): here, in the allocation "
      "this shell holds (salloc, qsub -I), or as a batch job of --site; the same run directory "
      "and report as submit");
  add_whole_number_flag(
      *cmd, "-n,--nproc-per-node,--ranks-per-node",
      [opts](long long v) { opts->job.ranks_per_node = static_cast<int>(v); }, 1,
      plan::kMaxRanksPerNode, "Ranks per node (the spec's ranks_per_node; default 1)");
  add_whole_number_flag(
      *cmd, "--nodes", [opts](long long v) { opts->job.nodes = static_cast<int>(v); }, 1,
      plan::kMaxNodes,
      "Nodes (default: all the allocation holds, else 1; a batch site submits a job of N)");
  cmd->add_option("--framework", opts->job.framework,
                  "Export this framework's rendezvous variables to each rank (torch: MASTER_ADDR, "
                  "RANK, WORLD_SIZE, ...): " +
                      join_alternatives(launch::framework_names()));
  add_whole_number_flag(
      *cmd, "--restarts", [opts](long long v) { opts->job.restarts = static_cast<int>(v); }, 0,
      plan::kMaxRestarts, "Run the job again up to N times when it fails");
  cmd->add_option("--site", opts->job.site,
                  "A built-in site or a site profile (default: local, or the allocation's "
                  "scheduler inside one)");
  cmd->add_option("--name", opts->job.name,
                  "The job's name (default: the script's, train.py -> train)");
  cmd->add_option("--records", opts->job.records,
                  "How much each rank's metric file keeps (the spec's records:): intervals (the "
                  "default) or steps");
  cmd->add_option("--hang-after", opts->job.hang_after,
                  "How long ranks wait in a collective before the hang watch names who holds "
                  "them (the spec's hang_after:): 30s (the default), 2m, ... or off");
  cmd->add_option("--on-hang", opts->job.on_hang,
                  "What the hang watch does to the rank it names (the spec's on_hang:): abort "
                  "(the default) or wait");
  cmd->add_option("--set", opts->overrides,
                  "Set any other spec field: KEY=VALUE (VALUE is YAML; KEY may be a.b)")
      ->allow_extra_args(false);
  cmd->add_flag("--dry-run", opts->dry_run, "Print the launch script; write and run nothing");
  cmd->add_flag(
      "--no-rank-prefix", opts->no_rank_prefix,
      "On a terminal, show the ranks' lines as they are, without \"[RANK] \" before each");
  cmd->add_option("command", opts->job.command,
                  "The program and its arguments: everything from the first word that is no flag "
                  "of run's on (dtrain run -n 2 python3 train.py --epochs 1)")
      ->required();
  // The program's own flags are its own: from the first positional word on, nothing is run's.
  cmd->positionals_at_end();
  cmd->callback([opts, &action] { action = [opts] { return run_run(*opts); }; });
}

}  // namespace dtrain::cli
