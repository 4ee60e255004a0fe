// `dtrain submit SPEC [--dry-run] [--wait]`: spec -> plan -> run directory -> launch. For the
// local site the job runs now, in the foreground, and its exit status is dtrain's; batch sites get
// sbatch/qsub, and --wait follows the job to its end and returns its exit status.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "batch_job.hpp"
#include "commands.hpp"
#include "mpijob_submit.hpp"
#include "plan/errors.hpp"
#include "planning.hpp"
#include "process.hpp"
#include "report/stats.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {
namespace {

struct SubmitOptions {
  std::string spec_path;
  bool dry_run = false;
  bool wait = false;
  std::string site;
  std::vector<std::string> overrides;
};

void print_throughput(const std::string& run_dir) {
  try {
    const auto stats = read_run_stats(run_dir);
    std::printf("\n# throughput (dtrain stats %s)\n%s", run_dir.c_str(),
                report::format_stats_table(stats).c_str());
  } catch (const std::exception&) {
    // A job that does not use libdtrain's Meter has no records; that is not an error.
  }
}

int run_submit(const SubmitOptions& opts) {
  PlannedJob job = plan_from_file(opts.spec_path, opts.site, opts.overrides);
  const plan::LaunchPlan& plan = job.plan;
  for (const auto& w : plan.warnings) std::fprintf(stderr, "dtrain: warning: %s\n", w.c_str());
  if (opts.dry_run) {
    std::fputs(plan.script.c_str(), stdout);
    return 0;
  }
  const plan::Submission submission = job.scheduler().submission();
  if (submission == plan::Submission::kManifest) {
    if (opts.wait) {
      throw plan::UsageError("dtrain: --wait: not supported for site " + plan.site +
                             " (Kubernetes); follow the job with `kubectl get mpijob " + plan.name +
                             " -w` and `kubectl logs -f job/" + plan.name + "-launcher`");
    }
    const SubmittedMpiJob submitted = submit_mpijob(job);
    const std::string ns =
        job.spec.k8s_namespace.empty() ? std::string() : " -n " + job.spec.k8s_namespace;
    std::printf(
        "dtrain: submitted %s to kubernetes (site %s, %d ranks), record in %s\n"
        "dtrain: follow it with `kubectl get mpijob %s%s -w` and `kubectl logs -f "
        "job/%s-launcher%s`\n",
        submitted.object.c_str(), plan.site.c_str(), plan.world_size(), submitted.run_dir.c_str(),
        plan.name.c_str(), ns.c_str(), plan.name.c_str(), ns.c_str());
    return 0;
  }
  if (submission == plan::Submission::kHeldBatchJob) {
    const SubmittedJob submitted = submit_batch(job);
    std::printf("dtrain: submitted job %s to %s (site %s, %d ranks), run directory %s\n",
                submitted.job_id.c_str(), std::string(job.scheduler().name()).c_str(),
                plan.site.c_str(), plan.world_size(), submitted.run_dir.c_str());
    std::fflush(stdout);
    if (!opts.wait) return 0;
    const int status = wait_for_batch(submitted);
    print_throughput(submitted.run_dir);
    std::printf("dtrain: job %s %s (exit status %d); logs and metrics in %s\n",
                submitted.job_id.c_str(), status == 0 ? "completed" : "FAILED", status,
                submitted.run_dir.c_str());
    return status;
  }
  write_run_dir(plan, job.spec_text);
  std::printf("dtrain: job %s (%s, %d ranks), run directory %s\n", plan.job_id.c_str(),
              plan.site.c_str(), plan.world_size(), plan.run_dir.c_str());
  std::fflush(stdout);
  const int status = run_inheriting_stdio({"bash", plan.run_dir + "/" + plan::kScriptName});
  print_throughput(plan.run_dir);
  std::printf("dtrain: job %s %s (exit status %d); logs and metrics in %s\n", plan.job_id.c_str(),
              status == 0 ? "completed" : "FAILED", status, plan.run_dir.c_str());
  return status;
}

}  // namespace

void register_submit(CLI::App& app, Action& action) {
  auto opts = std::make_shared<SubmitOptions>();
  auto* cmd = app.add_subcommand("submit", "Plan a job from its spec and run or submit it");
  cmd->add_option("spec", opts->spec_path, "Job spec (YAML)")->required();
  cmd->add_flag("--dry-run", opts->dry_run, "Print the launch script; write and run nothing");
  cmd->add_flag("--wait", opts->wait,
                "Batch sites: follow the job to its end (state, time, steps/s) and return its "
                "exit status");
  cmd->add_option("--set", opts->overrides,
                  "Override a spec field: KEY=VALUE (VALUE is YAML; KEY may be a.b)");
  cmd->add_option("--site", opts->site, "Run on this site instead of the spec's");
  cmd->callback([opts, &action] { action = [opts] { return run_submit(*opts); }; });
}

}  // namespace dtrain::cli
