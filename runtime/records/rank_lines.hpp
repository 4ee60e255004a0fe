// The lines `dtrain run-rank` (and the SPANK plugin's --dtrain-run-dir) adds to a rank's log
// around the command's own output, so a run directory alone tells where each rank ran and how it
// ended (docs/logs.md):
//   <time> dtrain: rank 3 of 4 started on node01 (local rank 3 of 4, pid 4242): python train.py
//   <time> dtrain: rank 3 exited with status 1
//   <time> dtrain: rank 3 was killed by signal 9 (SIGKILL)
//   <time> dtrain: rank 3 of 4 started on node01 (local rank 3 of 4, pid 4300, attempt 1): ...
// A rank whose log has no exit line went silent: its run-rank itself was killed or is still
// running. Formatting and parsing live together so the two cannot drift apart; run-rank and the
// SPANK plugin write them through output_tee.hpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtrain::records {

struct RankStart {
  int rank = 0;
  int world_size = 0;
  std::string host;
  int local_rank = 0;
  int local_size = 0;
  long pid = 0;
  std::string command;  // the words joined by spaces, for people to read
  // The job's attempt (DTRAIN_ATTEMPT, `dtrain supervise`): written as ", attempt N" after the pid
  // when above 0, so a restarted job's merged log shows where each attempt began.
  int attempt = 0;
};

struct RankExit {
  int rank = 0;
  int status = 0;  // exit status when signal == 0
  int signal = 0;  // the signal that killed the command, 0 when it exited
  bool failed() const { return signal != 0 || status != 0; }
};

// Both take and return the text after the timestamp and its space.
std::string format_rank_start(const RankStart& start);
std::string format_rank_exit(const RankExit& exit);
std::optional<RankStart> parse_rank_start(std::string_view text);
std::optional<RankExit> parse_rank_exit(std::string_view text);

// A third line, appended after the launch ended by the process that outlived it (`dtrain
// supervise` between attempts, `dtrain submit` when it saw the job end), to the log of a rank that
// was ended before it heard what another rank reported: Open MPI's abort has Slurm end the whole
// step within milliseconds of a lost rank, before the peer alarm reaches every rank
// (docs/fault-tolerance.md, "How it works"). It quotes the report, says whose it was and who wrote
// the line, after the rank's exit line when it has one:
//   <time> dtrain: rank 1 ended before it heard what rank 2 reported: peer process lost: rank 3
//   (on node2) was killed or exited without finalizing (seen by rank 2 on that node); written
//   after the launch ended, by dtrain supervise
struct LostRankNote {
  int rank = 0;      // whose log it goes to
  int reporter = 0;  // the rank whose log named the lost one
  int lost = 0;
  std::string lost_host;  // "" for "this node"
  int told_by = -1;       // lost_peer_text's: -1 when the reporter saw it, `lost` when it left
  std::string writer;     // "dtrain supervise"
};
std::string format_lost_rank_note(const LostRankNote& note);
// True for the text of a line format_lost_rank_note wrote (after the timestamp): it is not the
// rank's output, so it does not undo the exit line before it.
bool is_lost_rank_note(std::string_view text);

// libdtrain's words when an exception leaves the program through a Context (context.cpp: "dtrain:
// rank 2 of 3 (on node1): leaving the job: an exception is propagating through dtrain::Context
// ..."): the exception itself comes on the next lines, from the program's handler or
// std::terminate, and is what a reader should quote as the rank's error.
inline constexpr std::string_view kExceptionPropagatesWords =
    "an exception is propagating through dtrain::Context";

// "exited with status 1" / "was killed by signal 9 (SIGKILL)".
std::string describe_exit(const RankExit& exit);

// "SIGKILL" for 9 (the Linux numbering), "signal 77" for one without a name.
std::string signal_name(int signal);

std::string join_command(const std::vector<std::string>& words);

// RankStart::attempt from DTRAIN_ATTEMPT's text (`dtrain supervise` sets it): 0 for "" or anything
// but decimal digits from 0 to kMaxAttempt (common/number_text.hpp). The writers of start lines
// (run-rank, the plugin) read it this way; libdtrain's init() refuses a bad value by name.
int attempt_from_text(std::string_view text);

}  // namespace dtrain::records
