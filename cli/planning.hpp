// The CLI's planning entry point: a spec file + --site/--set -> PlannedJob, through plan::plan()
// with this machine's facts (job id, directories, dtrain's path, templates) as inputs; and the
// site lookup it needs: a profile by name (built in: templates/sites/NAME.yaml, compiled into
// dtrain) or by path (a user's own profile).
#pragma once

#include <string>
#include <vector>

#include "plan/job_spec.hpp"
#include "plan/launch_plan.hpp"
#include "plan/schedulers/scheduler.hpp"
#include "plan/site_profile.hpp"

namespace dtrain::cli {

plan::SiteProfile resolve_site(const std::string& site);

// Where the profile's `topology:` file is: absolute as given; relative to dtrain's templates
// (installed share/dtrain/templates, or the source tree's when run from the build tree) for a
// built-in site; relative to the profile's directory for a profile file. Throws UsageError naming
// the places tried when it is nowhere.
std::string resolve_site_topology(const std::string& site, const plan::SiteProfile& profile);

// Reads the spec, applies --site/--set, parses, resolves the site and plans. A local job id and
// run directory are made here (batch sites get theirs from the scheduler).
struct PlannedJob {
  std::string spec_text;  // after overrides: what the run directory keeps as job.yaml
  plan::JobSpec spec;
  plan::SiteProfile site;
  plan::LaunchPlan plan;

  const plan::SchedulerAdapter& scheduler() const { return plan::scheduler_of(site); }
};
// Where the job will run: "" for where its site says (this machine, a new batch job); else the id
// of the allocation this shell is in (salloc, qsub -I), whose nodes run the site's job script
// at once. Such a run's id is the allocation's, and a spec without run_dir gets
// runs/<name>-<allocation>.<n>, a new one each time.
struct PlanPlace {
  std::string allocation_id;
};
PlannedJob plan_from_file(const std::string& spec_path, const std::string& site_override,
                          const std::vector<std::string>& overrides, const PlanPlace& place = {});
// The same from a spec's text (`dtrain run` writes one from its flags); `spec_source` names it in
// messages.
PlannedJob plan_from_text(const std::string& text, const std::string& spec_source,
                          const plan::SpecOverrides& overrides, const PlanPlace& place = {});

// The scheduler a run directory's job was planned for (`dtrain supervise` runs inside the job and
// asks its scheduler): the site of its job.yaml, resolved as `dtrain submit` resolved it (the job
// script runs in the submit directory, so a relative profile path names the same file). Throws
// InputError naming the file when the run directory has no readable spec.
const plan::SchedulerAdapter& planned_scheduler(const std::string& run_dir);

}  // namespace dtrain::cli
