// Time in rank logs: every line of rank-NNNNN.log starts with an RFC 3339 UTC timestamp with
// microseconds and a space ("2026-11-22T10:00:00.123456Z "), so `dtrain logs` can merge the ranks
// by time. The writers (run-rank, the SPANK plugin) and the readers (`dtrain logs`, `stats`,
// `timeline`) share this one definition of the stamp, format and parse, and the splitter that
// turns arbitrary pipe reads into whole lines. Pure: no clock read, no files.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace dtrain::records {

// Width of "2026-11-22T10:00:00.123456Z"; a log line has one more byte, the space.
inline constexpr std::size_t kLogTimestampWidth = 27;

// Microseconds since 1970-01-01T00:00:00Z of the timestamp that starts `line`, or nothing when the
// line does not start with one followed by a space (or ends right after it).
std::optional<std::int64_t> parse_log_timestamp(std::string_view line);

// "2026-11-22T10:00:00.123456Z" for microseconds since the epoch, or for a clock reading.
std::string format_log_time(std::int64_t micros);
std::string format_log_time(std::chrono::system_clock::time_point t);

// Unix time in seconds (as the metric records carry it) to microseconds, rounded to nearest.
std::int64_t unix_seconds_to_micros(double seconds);

// A time as people type it: "2026-11-22T10:00:00Z", with an optional fraction of up to 6 digits
// and either "Z" or a "+HH:MM"/"-HH:MM" offset; a space may replace the "T". Microseconds since
// the epoch, or nothing when `text` is not such a time.
std::optional<std::int64_t> parse_rfc3339(std::string_view text);

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

}  // namespace dtrain::records
