// The one place that runs a rank's output into its log: `dtrain run-rank` (which execs the rank's
// command in the child) and the SPANK plugin's --dtrain-run-dir (whose child goes on to become the
// Slurm task) both fork through here and stay behind as the logger. The logger writes run-rank's
// start line, copies every line of the child's stdout and stderr into rank-NNNNN.log with a
// timestamp and on to where it went before, forwards the job's signals to the child and ends the
// log with the exit line, so `dtrain logs --first-error`, the `[rank@host]` prefixes and the
// per-node rows of `dtrain stats` work whichever of the two wrote the run directory.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "records/rank_lines.hpp"

namespace dtrain::records {

// A child whose stdout and stderr are pipes to this process.
struct TeedChild {
  pid_t pid = -1;   // 0 in the child itself
  int out_fd = -1;  // the read ends, in the parent
  int err_fd = -1;
};

// Forks with the child's stdout and stderr on fresh pipes: in the child (pid 0) fds 1 and 2 are
// the write ends and no other pipe end is open; in the parent the write ends are closed. Throws
// std::runtime_error "<who>: pipe: <reason>" (or fork), leaving nothing open.
TeedChild fork_with_output_pipes(std::string_view who);

// Opens the rank log at `path` for appending (created 0644, close-on-exec); -1 with errno set when
// it cannot.
int open_rank_log(const std::string& path) noexcept;

// This machine's name for the start line (gethostname), "unknown-host" when it has none.
std::string this_host();

struct TeeTargets {
  int log_fd = -1;           // the rank log
  int out_passthrough = -1;  // where the child's stdout lines go on, unchanged
  int err_passthrough = -1;  // and its stderr lines
  // The rank's alarm socket (rank_alarm.hpp), -1 without: when the child exits with a failure
  // status without having reported a lost peer, an alarm that reaches the socket within
  // kAlarmWaitMs is reported for it.
  int alarm_fd = -1;
};

// How long a logger whose rank failed keeps it unreaped and waits for an alarm (output_tee.cpp):
// the alarm's repeats (5 ms apart) arrive within milliseconds of the loss; the launcher ends the
// step about a second after it.
inline constexpr int kAlarmWaitMs = 300;

// Writes `start` (its pid set to the child's) to the log, tees the child's output until both pipes
// close or the child has exited and its output went quiet, then writes the exit line and returns
// the child's wait status (with `alarm_fd`, the report of a lost peer the child did not write
// before the exit line). Every job signal (common/job_signals.hpp) and SIGCONT reaching this
// process while it tees goes to the child. Closes the child's pipe ends. Throws
// std::runtime_error "<who>: poll: <reason>" (or waitpid) when the system calls fail.
int tee_output(const TeedChild& child, const TeeTargets& targets, RankStart start,
               std::string_view who);

// The exit line's facts for a wait status: the signal that killed it, or its exit status (1 when
// it did neither).
RankExit rank_exit(int rank, int wait_status);

}  // namespace dtrain::records
