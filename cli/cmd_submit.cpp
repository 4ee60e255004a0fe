// `dtrain submit SPEC [--dry-run]`: spec -> plan -> run directory -> launch. For the local site
// the job runs now, in the foreground, and its exit status is dtrain's.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

#include "affinity/topology.hpp"
#include "commands.hpp"
#include "dtrain/config.hpp"
#include "embedded_templates.hpp"
#include "plan/errors.hpp"
#include "plan/job_spec.hpp"
#include "plan/planner.hpp"
#include "plan/stats.hpp"
#include "process.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {
namespace {
namespace fs = std::filesystem;

struct SubmitOptions {
  std::string spec_path;
  bool dry_run = false;
  std::string site;
  std::vector<std::string> overrides;
};

// Local job ids sort by submission time and stay unique across concurrent submits on one host.
std::string local_job_id() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d%02d%02d-%02d%02d%02d-%d", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(getpid()));
  return buf;
}

plan::LocalMachine this_machine() {
  plan::LocalMachine m;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) m.hostname = host;
  m.cores = affinity::load_live_topology().cores;
  m.is_root = geteuid() == 0;
  return m;
}

void print_throughput(const std::string& run_dir) {
  try {
    auto stats = plan::compute_stats(read_metric_records(run_dir));
    std::printf("\n# throughput (dtrain stats %s)\n%s", run_dir.c_str(),
                plan::format_stats_table(stats).c_str());
  } catch (const std::exception&) {
    // A job that does not use libdtrain's Meter has no records; that is not an error.
  }
}

int run_submit(const SubmitOptions& opts) {
  std::vector<std::string> overrides = opts.overrides;
  if (!opts.site.empty()) overrides.push_back("site=" + opts.site);
  const std::string text =
      plan::apply_overrides(read_spec_file(opts.spec_path), opts.spec_path, overrides);
  const plan::JobSpec spec = plan::parse_job_spec(text, opts.spec_path);
  if (spec.site != "local") {
    throw plan::UsageError("dtrain: site " + spec.site +
                           ": only the local site can be submitted by this version; expected "
                           "site: local");
  }

  plan::PlanInputs inputs;
  inputs.job_id = local_job_id();
  inputs.workdir = fs::current_path().string();
  inputs.run_dir = spec.run_dir.empty()
                       ? (fs::current_path() / "runs" / (spec.name + "-" + inputs.job_id)).string()
                       : fs::absolute(spec.run_dir).lexically_normal().string();
  inputs.dtrain_exe = self_executable();
  inputs.version = DTRAIN_VERSION;
  const plan::LaunchPlan plan =
      plan::plan_local(spec, this_machine(), inputs, embedded_template("local.sh.tmpl"));

  for (const auto& warning : plan.warnings)
    std::fprintf(stderr, "dtrain: warning: %s\n", warning.c_str());
  if (opts.dry_run) {
    std::fputs(plan.script.c_str(), stdout);
    return 0;
  }
  write_run_dir(plan, text);
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
  cmd->add_option("--set", opts->overrides,
                  "Override a spec field: KEY=VALUE (VALUE is YAML; KEY may be a.b)");
  cmd->add_option("--site", opts->site, "Run on this site instead of the spec's");
  cmd->callback([opts, &action] { action = [opts] { return run_submit(*opts); }; });
}

}  // namespace dtrain::cli
