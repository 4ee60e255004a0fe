// The command lines that submit, hold, release, cancel and query a batch job on each scheduler,
// and the parsers for what those commands print. Pure: `dtrain submit` runs the commands and
// hands their output here, so every scheduler's quirks are unit-tested without a scheduler.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "plan/site_profile.hpp"

namespace dtrain::plan {

using Argv = std::vector<std::string>;

// Submits `script` held (so dtrain can name the run directory after the job id before the job
// can start): sbatch --hold --parsable, qsub -h (PBS Pro, Torque), qsub -h (Cobalt).
Argv submit_held_command(Scheduler s, const std::string& script);
Argv release_command(Scheduler s, const std::string& job_id);
Argv cancel_command(Scheduler s, const std::string& job_id);
// Prints the job's state: scontrol show job -o ID; qstat -f ID (PBS Pro adds -x for finished
// jobs); qstat ID (Cobalt).
Argv status_command(Scheduler s, const std::string& job_id);

// The job id from the submit command's standard output: "123" or "123;cluster" (sbatch
// --parsable), "123.server" (PBS: the full id is kept, since qrls/qdel/qstat want it), "123"
// (Cobalt). Throws SubmitError quoting the output when there is no id in it.
std::string parse_submitted_job_id(Scheduler s, std::string_view output);

// The number alone ("123" of "123.server"), as the job script's DTRAIN_JOB_ID spells it.
std::string job_number(std::string_view job_id);

struct JobStatus {
  std::string state;  // the scheduler's word: PENDING, RUNNING, COMPLETED, ... or Q, R, C, F ...
  bool finished = false;
  std::optional<int> exit_status;  // when the scheduler says; 128 + N for signal N
  std::string reason;              // why it waits or failed, when the scheduler says
  std::string nodes;               // the job's nodes as the scheduler writes them ("node[1-2]")
  bool node_failed = false;        // it ended because one of its nodes failed (Slurm NODE_FAIL)
};

// Parses status_command's output. `nullopt` when the scheduler no longer knows the job (it
// finished long enough ago to be purged), which the caller treats as finished, status unknown.
std::optional<JobStatus> parse_job_status(Scheduler s, std::string_view output);

// After a job ended with node_failed: the command that lists which of its `nodes` are down and
// why (Slurm: sinfo); empty when the scheduler has none.
Argv failed_nodes_command(Scheduler s, const std::string& nodes);
// "node2 (Not responding)", one per failed node, from failed_nodes_command's output.
std::vector<std::string> parse_failed_nodes(Scheduler s, std::string_view output);

class SubmitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dtrain::plan
