// --dtrain-run-dir: each task's stdout and stderr also go, line by line with a UTC timestamp, to
// DIR/rank-NNNNN.log, framed by the start and exit lines: the format `dtrain run-rank` writes
// (records/output_tee.hpp does both), so `dtrain logs`, `--first-error` and `stats` read either.
#pragma once

#include <string>

#include "records/rank_lines.hpp"

namespace dtrain::spank {

// Called in the task process (task_init), which then forks: the child returns and goes on to
// exec the user's program with stdout/stderr on pipes; this process stays behind as the logger,
// forwards termination signals to the child, and exits with the child's status once its output
// is drained (never returning: no exception leaves it). Slurm waits for this process, so the last
// lines are written before the step ends (a logger that outlived the task would be killed with
// the step's leftovers). `start` names the task (its pid is filled in). Throws std::runtime_error
// naming the directory or the call when the log cannot be set up; nothing has been changed then.
void tee_task_output(const std::string& dir, const records::RankStart& start);

}  // namespace dtrain::spank
