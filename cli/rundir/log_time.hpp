// Time in rank logs: every line of rank-NNNNN.log starts with an RFC 3339 UTC timestamp with
// microseconds and a space ("2026-11-22T10:00:00.123456Z "). These helpers turn that fixed-width
// prefix into microseconds since the Unix epoch and back, and parse the --since/--until flags.
// Pure: no clock, no files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dtrain::rundir {

// Width of "2026-11-22T10:00:00.123456Z"; a log line has one more byte, the space.
inline constexpr std::size_t kLogTimestampWidth = 27;

// Microseconds since 1970-01-01T00:00:00Z of the timestamp that starts `line`, or nothing when the
// line does not start with one followed by a space (or ends right after it).
std::optional<std::int64_t> parse_log_timestamp(std::string_view line);

// "2026-11-22T10:00:00.123456Z" for microseconds since the epoch.
std::string format_log_time(std::int64_t micros);

// Unix time in seconds (as the metric records carry it) to microseconds, rounded to nearest.
std::int64_t unix_seconds_to_micros(double seconds);

// A --since/--until value: "2026-11-22T10:00:00Z", with an optional fraction of up to 6 digits
// and either "Z" or a "+HH:MM"/"-HH:MM" offset; a space may replace the "T". Throws
// plan::UsageError naming `flag`, what was expected and what was found.
std::int64_t parse_time_flag(std::string_view text, std::string_view flag);

}  // namespace dtrain::rundir
