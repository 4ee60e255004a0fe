// What a run directory says about its job, as `dtrain stats` and `dtrain report` show it: the
// job's name, id and site, its shape (plan.json, written by `dtrain submit`) and GPUs per rank
// (job.yaml, the spec as submitted), and the directory's name as the run's label. The one reader
// of those two files' contents after submission; cli/run_dir.cpp reads their bytes
// (read_run_summary). Pure.
#pragma once

#include <optional>
#include <string>

#include "common/errors.hpp"
#include "report/run_summary.hpp"
#include "report/scaling.hpp"
#include "report/stats.hpp"

namespace dtrain::cli {

using report::RunSummary;  // report/run_summary.hpp: the record, shared with the report page

// A damaged plan.json: the message names the file and the field.
class RunSummaryError : public InputError {
 public:
  using InputError::InputError;
};

// The run's label: the last name of `run_dir` ("runs/fm-42/" -> "fm-42").
std::string run_label(const std::string& run_dir);

// The summary of the run in `run_dir` from the texts of its plan.json and job.yaml (nothing: the
// file is not there, as in a run directory made by hand), each named by its path in messages. A
// field a file leaves out stays empty; one it holds must be well formed: a plan.json that is no
// JSON object or has a field of the wrong kind throws RunSummaryError, a bad gpus_per_rank in
// job.yaml plan::SpecError, each naming the file and the field.
RunSummary parse_run_summary(const std::string& run_dir,
                             const std::optional<std::string>& plan_json,
                             const std::string& plan_path,
                             const std::optional<std::string>& spec_yaml,
                             const std::string& spec_path);

// The run as `dtrain stats` and `report` compare it with others: its label and job (`summary`),
// its ranks and throughput (`stats`), its GPUs (ranks x gpus_per_rank, when job.yaml says).
report::ScalingRun scaling_run(const RunSummary& summary, const report::RunStats& stats);

}  // namespace dtrain::cli
