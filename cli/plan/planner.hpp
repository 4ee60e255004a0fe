// Spec + machine facts + run inputs -> LaunchPlan. Pure: everything it needs (job id, paths, the
// template text, whether we run as root) is passed in, so the same inputs give the same script.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plan/job_spec.hpp"
#include "plan/launch_plan.hpp"

namespace dtrain::plan {

// Facts about the machine a local run starts on.
struct LocalMachine {
  std::string hostname = "localhost";
  int cores = 1;
  bool is_root = false;
};

struct PlanInputs {
  std::string job_id;
  std::string run_dir;     // absolute
  std::string workdir;     // absolute; the job runs there, as sbatch jobs run in the submit dir
  std::string dtrain_exe;  // absolute path of the dtrain executable ranks call back into
  std::string version;
};

// The words each rank runs: the spec's words, or `bash -c LINE` for a command line string.
std::vector<std::string> rank_command(const JobSpec& spec);

// The affinity policies and the framework as flags of `dtrain bind` (prefix "--") or of the SPANK
// plugin ("--dtrain-"); `cpu` is the CPU policy to pass (the spec's, unless the planner had to
// relax it).
std::vector<std::string> bind_policy_flags(const JobSpec& spec, const std::string& prefix,
                                           const std::string& cpu);

// The spec fields only a Kubernetes site uses (image, namespace) that the spec sets: the other
// sites name them in a warning rather than drop them silently.
std::vector<const char*> kubernetes_only_fields(const JobSpec& spec);

// `local_template` is the text of templates/local.sh.tmpl.
LaunchPlan plan_local(const JobSpec& spec, const LocalMachine& machine, const PlanInputs& inputs,
                      std::string_view local_template);

}  // namespace dtrain::plan
