// What `dtrain submit` and `dtrain run` do with a planned job: print the script (--dry-run), run it
// here (the local site), submit it (a batch site; --wait follows it), create it (Kubernetes), or
// run the batch site's script at once inside the allocation this shell holds (salloc, qsub -I),
// with the allocation's launcher on its nodes; then say how it ended, with the throughput and the
// first failure, as `dtrain stats` and `dtrain logs --first-error` would.
#pragma once

#include <optional>
#include <string>

#include "plan/allocation.hpp"
#include "planning.hpp"

namespace dtrain::cli {

struct LaunchOptions {
  std::string command;  // "submit" or "run", for messages
  bool dry_run = false;
  bool wait = false;
  // Set: the job runs in this allocation (the plan was made with its PlanPlace).
  std::optional<plan::HeldAllocation> allocation;
  // A job that runs from here (local, in an allocation) with its output on a terminal: each rank's
  // lines there begin with "[RANK] " (rank_prefix.hpp). False: --no-rank-prefix.
  bool rank_prefix = true;
};

// The job's exit status (0 once submitted, without --wait); throws UsageError when the job cannot
// run in `allocation` (a site on another scheduler, more nodes than it holds).
int launch_planned(PlannedJob& job, const LaunchOptions& options);

// The allocation this shell holds, from its environment (plan::held_allocation), with a PBS job's
// node count read from its node file; nullopt when it holds none.
std::optional<plan::HeldAllocation> this_allocation();

}  // namespace dtrain::cli
