// `dtrain logs --first-error`: which rank failed first and why, telling the culprit from the
// victims. A rank that exited first with a failure, or went silent first (its log ends without
// run-rank's exit line, or the heartbeats show it never reached a collective the others entered),
// is the culprit; ranks that fail later, or whose logs report a lost peer, a watchdog or a timeout,
// are victims, except ranks that failed on their own with the culprit's very error line: they are
// culprits too. A rank whose error names the ranks a collective missed ("missing ranks: 1", as
// libdtrain's backends say) is a victim whatever the exit order, and the rank it names is the
// culprit: a stopped rank that the launcher wakes (Open MPI sends SIGCONT before it kills the
// job) exits last. A Python traceback's error line is its exception line, at its end. When every
// failing rank was stopped by the launcher (SIGTERM at the walltime, a cancel), no rank is blamed.
// Pure: the command feeds each rank's lines to a RankLogScan (rank_log_scan.hpp), and the scans
// come here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "report/hang.hpp"
#include "report/rank_log_scan.hpp"

namespace dtrain::report {

struct RankEnd {
  enum class Kind { kFinished, kFailed, kSilent, kRunning };
  int rank = 0;
  std::string host = "?";
  Kind kind = Kind::kRunning;
  std::int64_t time = 0;              // of the exit, or of the last sign of life when silent
  std::string how;                    // "was killed by signal 9 (SIGKILL)", "went silent", ...
  std::optional<TimedLine> evidence;  // the peer-loss or first error line, when there is one
  bool peer_loss = false;             // its log reports a lost peer / watchdog / timeout
  std::vector<std::string> last_lines;
};

// A rank log that matched rank-NNNNN.log but could not be read (a FIFO, a directory, a dangling
// symbolic link or a loop, a device): left out of the scans and named in the report.
struct UnreadableLog {
  int rank = 0;
  std::string path;
  std::string why;  // "a FIFO (named pipe)", "cannot open it: Too many levels of symbolic links"
};

struct FirstErrorReport {
  int ranks = 0;  // whose logs were read
  // Named in every form of the report (add_unreadable_logs).
  std::vector<UnreadableLog> unreadable;
  // A log could not be read and the ranks whose logs were read only report a lost peer or
  // timeout: the culprit may be a rank whose log is unreadable, so none is named; the failing
  // ranks are all in `victims`.
  bool culprit_unknown = false;
  std::optional<RankEnd> culprit;
  std::string culprit_reason;  // why this rank was named
  // The culprit kept the others waiting (the heartbeats, or their "missing ranks" errors, say so)
  // and its own error reports a lost peer: it was written after the launcher woke it, when the
  // others had given up, and names them, not the cause. Quoted as such, never as the verdict.
  bool culprit_error_after_others = false;
  // Ranks that, like the culprit, failed on their own with its error line: culprits too.
  std::vector<RankEnd> same_error;  // by time
  std::vector<RankEnd> victims;     // by time
  // When every failing rank was stopped by the launcher or scheduler (the walltime was reached,
  // the job was cancelled), there is no culprit and they are listed here instead.
  std::vector<RankEnd> stopped;   // by time
  bool walltime_reached = false;  // known to have ended at its walltime: every failing rank stopped
  std::vector<int> finished;      // exited with status 0
  std::vector<int> running;       // no exit line while no rank has ended either
};

// Heartbeat evidence for a culprit: ranks that never entered the collective #seq the others
// reached (from hang.hpp), with the collective's description. `late`: they did enter it, but only
// after it had failed on the ranks that waited for them.
struct MissedCollective {
  long long seq = 0;
  std::string what;  // "allreduce of 4096 bytes"
  std::vector<int> ranks;
  bool late = false;
};

// The heartbeat evidence in `hang`: the ranks that never entered a collective the others
// reached; else those that entered the first failed collective only after it failed elsewhere.
std::optional<MissedCollective> missed_collective(const HangReport& hang);

// `last_metric_time[i]` (optional, microseconds) is the last metric record of scans[i]'s rank: a
// sign of life for a rank that logs little. `walltime_reached`: the job is known to have ended at
// its walltime (`dtrain submit` saw it), so every failing rank was stopped, whatever its log
// holds: the launcher's SIGKILL can take a rank's logger before its exit line.
FirstErrorReport find_first_error(const std::vector<RankLogScan>& scans,
                                  const std::vector<std::optional<std::int64_t>>& last_metric_time,
                                  const std::optional<MissedCollective>& missed,
                                  bool walltime_reached = false);

// The order of a report's lists: by the time a rank ended, then by rank.
bool ended_before(const RankEnd& a, const RankEnd& b);

// Logs that could not be read: add_unreadable_logs (unreadable_logs.hpp).

std::string format_first_error(const FirstErrorReport& report);
// The report in one line for `dtrain submit`'s summary: "rank 1 on node0 exited with status 3:
// ValueError: boom"; "" when no rank failed.
std::string summarize_first_error(const FirstErrorReport& report);
nlohmann::json first_error_to_json(const FirstErrorReport& report);

}  // namespace dtrain::report
