// --dtrain-run-dir: each task's stdout and stderr also go, line by line with a UTC timestamp, to
// DIR/rank-NNNNN.log -- the format `dtrain run-rank` writes, so `dtrain logs` merges either.
#pragma once

#include <string>

namespace dtrain::spank {

// Called in the task process (task_init), which then forks: the child returns and goes on to
// exec the user's program with stdout/stderr on pipes; this process stays behind as the logger,
// forwards termination signals to the child, and exits with the child's status once its output
// is drained. Slurm waits for this process, so the last lines are written before the step ends
// (a logger that outlived the task would be killed with the step's leftovers). Throws
// std::runtime_error naming the directory or the call when the log cannot be set up; nothing
// has been changed then.
void tee_task_output(const std::string& dir, int rank);

}  // namespace dtrain::spank
