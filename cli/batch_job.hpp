// Submitting a planned job to a batch scheduler (sbatch, qsub) and following it to its end. The
// commands and their output formats live in the site's scheduler adapter (plan/schedulers/, pure
// and unit-tested); this is the thin part that runs them and touches the run directory.
#pragma once

#include <string>

#include "planning.hpp"

namespace dtrain::cli {

struct SubmittedJob {
  const plan::SchedulerAdapter* scheduler = nullptr;
  std::string job_id;   // as the scheduler spells it ("123", "123.server")
  std::string run_dir;  // runs/<name>-<job number>, already holding job.yaml, launch.sh, plan.json
};

// Writes the run directory, submits launch.sh held, renames the directory after the job id,
// then releases the job, so the job never starts before its directory has its final name. On any
// failure after the submission the job is cancelled and the error names the command and its
// output.
SubmittedJob submit_batch(PlannedJob& job);

struct BatchEnd {
  int status = 1;                 // the job's exit status
  bool walltime_reached = false;  // the scheduler stopped it at its time limit
};

// Follows the job until it ends, printing one line of progress (state, elapsed time, steps/s
// from rank 0's metric records) on stderr; returns how it ended.
BatchEnd wait_for_batch(const SubmittedJob& job);

}  // namespace dtrain::cli
