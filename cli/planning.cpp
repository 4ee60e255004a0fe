#include "planning.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "affinity/topology.hpp"
#include "common/errors.hpp"
#include "common/input_file.hpp"
#include "dtrain/config.hpp"
#include "embedded_templates.hpp"
#include "plan/planner.hpp"
#include "process.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {
namespace {
namespace fs = std::filesystem;

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

// `<workdir>/runs/<name>-<allocation>.<n>` with the first n that is not taken.
std::string free_step_dir(const std::string& workdir, const std::string& name,
                          const std::string& allocation_id) {
  for (int n = 0;; ++n) {
    std::string dir = plan::default_run_dir(workdir, name, allocation_id + "." + std::to_string(n));
    std::error_code ec;
    if (!fs::exists(dir, ec)) return dir;
  }
}

}  // namespace

namespace {
bool profile_is_builtin(const std::string& site) {
  const auto& builtins = plan::builtin_sites();
  return std::find(builtins.begin(), builtins.end(), site) != builtins.end();
}
}  // namespace

plan::SiteProfile resolve_site(const std::string& site) {
  if (profile_is_builtin(site)) {
    return plan::parse_site_profile(embedded_template("sites/" + site + ".yaml"),
                                    "(built-in site " + site + ")");
  }
  return plan::parse_site_profile(
      dtrain::read_input_file(site, "a site profile (.yaml) or a built-in site",
                              plan::kMaxProfileBytes),
      site);
}

std::string resolve_site_topology(const std::string& site, const plan::SiteProfile& profile) {
  if (profile.topology.empty()) return "";
  const fs::path named(profile.topology);
  std::vector<fs::path> candidates;
  if (named.is_absolute()) {
    candidates.push_back(named);
  } else if (profile_is_builtin(site)) {
    const fs::path exe_dir = fs::path(self_executable()).parent_path();
    candidates.push_back(exe_dir / ".." / DTRAIN_INSTALL_TEMPLATES_SUBDIR / named);
  } else {
    candidates.push_back(fs::absolute(site).parent_path() / named);
  }
  std::string tried;
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return c.lexically_normal().string();
    tried += (tried.empty() ? "" : ", ") + c.lexically_normal().string();
  }
  throw UsageError("dtrain: site " + profile.name + ": topology " + profile.topology +
                   ": no such file; expected an hwloc XML at " + tried);
}

PlannedJob plan_from_file(const std::string& spec_path, const std::string& site_override,
                          const std::vector<std::string>& overrides, const PlanPlace& place) {
  return plan_from_text(read_spec_file(spec_path), spec_path, {overrides, site_override, {}},
                        place);
}

PlannedJob plan_from_text(const std::string& text, const std::string& spec_source,
                          const plan::SpecOverrides& given, const PlanPlace& place) {
  PlannedJob job;
  // Parsed from the user's text, so errors name the user's lines; job.yaml in the run directory
  // records the spec as it ran, overrides applied.
  job.spec = plan::parse_job_spec(text, spec_source, given);
  job.spec_text = plan::apply_overrides(text, spec_source, given);
  job.site = resolve_site(job.spec.site);

  plan::PlanInputs inputs;
  inputs.job_id = local_job_id();
  inputs.workdir = fs::current_path().string();
  // Inside an allocation the batch script runs here, once per launch: each gets a run directory
  // of its own, named as a Slurm step is (<allocation>.<n>), which the script then names itself.
  if (!place.allocation_id.empty() && job.spec.run_dir.empty()) {
    job.spec.run_dir = free_step_dir(inputs.workdir, job.spec.name, place.allocation_id);
  }
  inputs.run_dir = job.spec.run_dir.empty()
                       ? plan::default_run_dir(inputs.workdir, job.spec.name, inputs.job_id)
                       : fs::absolute(job.spec.run_dir).lexically_normal().string();
  inputs.dtrain_exe = self_executable();
  inputs.version = DTRAIN_VERSION;
  if (job.scheduler().submission() == plan::Submission::kRunHere) inputs.machine = this_machine();
  job.plan = plan::plan(job.spec, spec_source, job.site, inputs,
                        [](std::string_view name) { return embedded_template(name); });
  if (!place.allocation_id.empty()) {
    job.plan.job_id = place.allocation_id;
    job.plan.run_dir = inputs.run_dir;
  }
  return job;
}

const plan::SchedulerAdapter& planned_scheduler(const std::string& run_dir) {
  const RunSpec run = read_run_spec(run_dir);
  return plan::scheduler_of(resolve_site(plan::parse_job_spec(run.text, run.path).site));
}

}  // namespace dtrain::cli
