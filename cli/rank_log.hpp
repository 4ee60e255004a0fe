// Pieces of `dtrain run-rank` that turn a rank's output into its log: RFC 3339 UTC timestamps with
// microseconds (the prefix every rank-NNNNN.log line starts with, so `dtrain logs` can merge by
// time) and a splitter that turns arbitrary pipe reads into whole lines.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace dtrain::cli {

// "2026-11-22T10:00:00.123456Z"
std::string format_log_timestamp(std::chrono::system_clock::time_point t);

// "rank-00042.log" / "rank-00042.jsonl"
std::string rank_file_name(int rank, std::string_view extension);

class LineSplitter {
 public:
  // Very long lines are cut into pieces of this size so a runaway writer cannot grow memory.
  static constexpr std::size_t kMaxLine = 1 << 20;
  using Sink = std::function<void(std::string_view line)>;  // the line without its '\n'

  explicit LineSplitter(Sink sink) : sink_(std::move(sink)) {}
  void feed(std::string_view bytes);
  void finish();  // emits a last line that had no '\n'

 private:
  Sink sink_;
  std::string partial_;
};

}  // namespace dtrain::cli
