// What one rank's log says about how it ended, for `dtrain logs --first-error` and `dtrain
// submit`'s summary: its start and exit lines (run-rank's), the last line's time, the first error
// line (a Python traceback's exception line), the last line reporting a lost peer and the ranks a
// "missing ranks: 1, 2" error names. Kept apart from the culprit analysis (first_error.hpp) because
// it is a different job: reading one rank's lines one at a time, with bounded memory whatever the
// log holds (a 100 MB line, a restart appended to the same file, CRLF line ends), while the
// analysis compares the ranks' finished scans. Pure: the command feeds each rank's lines here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/rank_lines.hpp"
#include "report/log_merge.hpp"

namespace dtrain::report {

struct TimedLine {
  std::int64_t time = 0;  // microseconds since the epoch
  std::string text;       // without the timestamp
};

// True for text that reports losing a peer rather than failing on its own ("peer closed",
// "NCCL watchdog", "timed out", "connection reset", ...), compared case-insensitively.
bool reports_peer_loss(std::string_view text);
// True for text that reports an error of any kind ("error", "exception", "Traceback", ...).
bool reports_error(std::string_view text);

// The most of one line the report quotes (and RankLogScan keeps): longer lines are cut at a
// character boundary and say how many bytes were left out.
constexpr std::size_t kMaxQuotedLine = 4096;
std::string cut_line(std::string_view line, std::size_t max_bytes);

// The ranks a "missing ranks: 1, 2; ..." error names, in order; empty when `text` has none or
// says "unknown".
std::vector<int> parse_missing_ranks(std::string_view text);

// What one rank's log says about its end, gathered line by line with bounded memory. When run-rank
// started the rank again in the same file (a restart appends), only the last attempt counts; with
// `up_to_attempt`, the last attempt up to that one: the lines from a later attempt's start line on
// are not read (`dtrain logs --first-error --attempt N`).
class RankLogScan {
 public:
  explicit RankLogScan(int rank, std::size_t keep_lines = 10,
                       std::optional<int> up_to_attempt = std::nullopt);
  void add(std::string_view line);

  int rank() const { return rank_; }
  const std::optional<records::RankStart>& start() const { return start_; }
  // The attempt of the last start line; 0 without one.
  int attempt() const { return start_ ? start_->attempt : 0; }
  const std::optional<records::RankExit>& exit() const { return exit_; }
  std::optional<std::int64_t> exit_time() const { return exit_time_; }
  // The last line of any kind, and the last of the rank's own output (not run-rank's lines).
  std::optional<std::int64_t> last_time() const { return last_time_; }
  const std::optional<TimedLine>& first_error() const { return first_error_; }
  // The latest line that reports a lost peer (earlier ones may be unrelated, such as a startup
  // line printing a timeout setting).
  const std::optional<TimedLine>& last_peer_loss() const { return last_peer_loss_; }
  std::vector<std::string> last_lines() const { return last_lines_.lines(); }
  // The ranks the last "missing ranks: 1, 2" line names (libdtrain's timeout and peer-loss
  // errors), with that line; empty when none does, or it says "unknown".
  // The first line that names a lost peer in libdtrain's words (common/alarm_datagram.hpp's
  // kLostPeerWords: the rank's own, its logger's or a note written after the launch ended).
  const std::optional<TimedLine>& lost_peer() const { return lost_peer_; }
  const std::vector<int>& missing_ranks() const { return missing_ranks_; }
  const std::optional<TimedLine>& missing_line() const { return missing_line_; }

 private:
  int rank_;
  std::size_t keep_lines_;
  std::optional<int> up_to_attempt_;
  bool past_attempt_ = false;  // a start line of an attempt after up_to_attempt_ was read
  std::optional<records::RankStart> start_;
  std::optional<records::RankExit> exit_;
  std::optional<std::int64_t> exit_time_;
  std::optional<std::int64_t> last_time_;
  std::int64_t current_time_ = 0;
  std::optional<TimedLine> first_error_;
  std::optional<TimedLine> last_peer_loss_;
  std::optional<TimedLine> lost_peer_;
  std::vector<int> missing_ranks_;
  std::optional<TimedLine> missing_line_;
  bool in_traceback_ = false;  // first_error_ is a Python traceback's header, its end not read yet
  // first_error_ is libdtrain's line announcing an exception leaving through its Context (or
  // std::terminate's header after it): the exception's own text is on the next lines.
  bool awaiting_exception_ = false;
  LastLines last_lines_;
};

}  // namespace dtrain::report
