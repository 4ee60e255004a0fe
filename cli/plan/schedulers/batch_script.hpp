// Spec + site profile -> the batch script of the site's scheduler (Slurm, PBS Pro, Cobalt, PBS)
// and its rank map. Pure, like plan_local: templates come in through `templates`.
#pragma once

#include <functional>
#include <string_view>

#include "plan/job_spec.hpp"
#include "plan/launch_plan.hpp"
#include "plan/planner.hpp"
#include "plan/site_profile.hpp"

namespace dtrain::plan {

// Returns the text of templates/<name>.
using TemplateLookup = std::function<std::string_view(std::string_view name)>;

// The resource shape of one node of the job, after the site's defaults are applied.
struct JobShape {
  int nodes = 1;
  int ranks_per_node = 1;
  int gpus_per_rank = 0;
  int cpus_per_rank = 0;  // 0: leave it to the scheduler
};

// Throws SpecError naming every field the site requires and the spec lacks, and every request
// beyond the site's node (more GPUs or CPUs per node than it has).
JobShape job_shape(const JobSpec& spec, const std::string& spec_source, const SiteProfile& site);

// Throws SpecError when the spec misses a field the site requires or asks for more GPUs or CPUs
// per node than the site has. `inputs.job_id` and `inputs.run_dir` are ignored: a batch job's id
// is known only inside the job, so the script names its run directory from it.
LaunchPlan plan_batch(const JobSpec& spec, const std::string& spec_source, const SiteProfile& site,
                      const PlanInputs& inputs, const TemplateLookup& templates);

}  // namespace dtrain::plan
