// How much CPU time and memory this process uses, for the Meter's resource records
// (docs/metrics.md): CPU time from getrusage (microseconds, both user and system, every thread),
// the resident set from /proc/self/statm (what is in memory now; getrusage's ru_maxrss is the
// peak). The parsing and the percentage are pure, for the unit tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace dtrain::runtime {

struct ProcessUsage {
  double cpu_seconds = 0;  // user + system time of every thread since the process began
  std::optional<std::int64_t> rss_bytes;  // absent when /proc/self/statm cannot be read
};

// The resident set of a /proc/PID/statm text ("size resident shared text lib data dt", in pages):
// its second field times `page_bytes`; nothing for a text without two whole numbers.
std::optional<std::int64_t> statm_resident_bytes(std::string_view statm, long page_bytes);

// CPU use between two readings as a percentage of one core (200 = two cores busy): the CPU seconds
// used over the wall seconds between them; 0 when no wall time passed or the CPU time went back.
double cpu_percent(double cpu_seconds_before, double cpu_seconds_after, double wall_seconds);

// This process now.
ProcessUsage read_process_usage();

}  // namespace dtrain::runtime
