// The run directory on disk: runs/<name>-<job id>/ with job.yaml, launch.sh, plan.json and the
// ranks' rank-NNNNN.log / rank-NNNNN.jsonl. The only CLI code that reads or writes those files.
#pragma once

#include <string>
#include <vector>

#include "plan/launch_plan.hpp"

namespace dtrain::cli {

// Reads a spec file, refusing what is not a regular file (directories, FIFOs, devices), unreadable
// files and files over the size limit (affinity::InputFileError: bad input).
std::string read_spec_file(const std::string& path);

// Creates `run_dir` (which must not exist or be empty) and writes job.yaml, launch.sh, plan.json.
void write_run_dir(const plan::LaunchPlan& plan, const std::string& spec_text);

// Rewrites plan.json in plan.run_dir (a batch job's id is known only after submission).
void write_plan_json(const plan::LaunchPlan& plan);

}  // namespace dtrain::cli
