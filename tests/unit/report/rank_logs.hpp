// Synthetic rank log lines for the report tests (rank log scan, first error): run-rank's start
// and exit lines and timestamped output, as `dtrain run-rank` writes them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "records/log_line.hpp"
#include "records/rank_lines.hpp"
#include "report/rank_log_scan.hpp"

namespace dtrain::report::testing {

inline constexpr std::int64_t kT0 = 1795341600LL * 1000000;  // 2026-11-22T10:00:00Z

// `text` as a log line at kT0 + `seconds`.
inline std::string at(double seconds, const std::string& text) {
  return records::format_log_time(kT0 + static_cast<std::int64_t>(seconds * 1e6)) + " " + text;
}

// A scan of `lines` that keeps the last 3.
inline RankLogScan scan(int rank, const std::vector<std::string>& lines) {
  RankLogScan s(rank, 3);
  for (const auto& l : lines) s.add(l);
  return s;
}

inline std::string start(int rank, int size = 4, const std::string& host = "node0") {
  return records::format_rank_start(
      {rank, size, host, rank, size, 100 + rank, "python train.py", 0});
}

inline std::string exit_line(int rank, int status, int signal = 0) {
  return records::format_rank_exit({rank, status, signal});
}

}  // namespace dtrain::report::testing
