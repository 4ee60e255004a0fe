// Finding a site profile by name (built in: templates/sites/NAME.yaml, compiled into dtrain) or by
// path (a user's own profile), and planning a spec on it.
#pragma once

#include <string>
#include <vector>

#include "plan/job_spec.hpp"
#include "plan/launch_plan.hpp"
#include "plan/site_profile.hpp"

namespace dtrain::cli {

plan::SiteProfile resolve_site(const std::string& site);

// Reads the spec, applies --site/--set, parses, resolves the site and plans. `job_id` and
// `run_dir` name a local run (ignored for batch sites, whose job id comes from the scheduler).
struct PlannedJob {
  std::string spec_text;  // after overrides: what the run directory keeps as job.yaml
  plan::JobSpec spec;
  plan::SiteProfile site;
  plan::LaunchPlan plan;
};
PlannedJob plan_from_file(const std::string& spec_path, const std::string& site_override,
                          const std::vector<std::string>& overrides);

}  // namespace dtrain::cli
