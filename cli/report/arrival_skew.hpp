// Stragglers from the collectives alone (docs/logs.md, "Stragglers while the job runs"), for any
// program on libdtrain or the torch backend, with the Meter or without: the rank that arrives last
// at a collective waits least in it (the others wait for it), so each collective's waits on every
// rank, matched by its sequence number, say which rank arrived last and how long after the others.
// Waits are durations on each rank's own clock: nothing needs the nodes' clocks to agree (they
// differ by milliseconds). The waits come in windows (records/live_status.hpp) that each rank's
// logger publishes in RUN_DIR/arrivals/rank-NNNNN.txt (format_arrivals); rank 0's logger judges
// them while the job runs, `dtrain stats` and the report afterwards (judge_arrivals). Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/rank_activity.hpp"
#include "report/stragglers.hpp"

namespace dtrain::report {

// The verdict compares at most the last this many collectives that every rank published ...
inline constexpr std::size_t kArrivalVerdictCalls = 200;
// ... and needs at least this many.
inline constexpr std::size_t kArrivalMinCalls = 40;
// A straggler arrived last in at least this share of them: among ranks that arrive in turn, two
// ranks' 200 collectives give one of them 50 % +- 3.5 %.
inline constexpr double kArrivalLastShare = 0.75;

// One window of a rank's collectives: window `index` holds collectives #index*W onwards
// (W = records::kArrivalWindowCalls), the first waits_us.size() of them.
struct ArrivalWindowData {
  std::uint64_t index = 0;
  std::int64_t first_enter_us = 0;  // the rank's own clock: only their difference is used
  std::int64_t last_leave_us = 0;
  std::vector<std::uint32_t> waits_us;
};

struct RankArrivals {
  int rank = -1;
  std::string host;
  std::vector<ArrivalWindowData> windows;
  // What the rank did outside its collectives lately (its logger's samples; rank_activity.hpp).
  Activity doing = Activity::kUnknown;
  double cpu_share = -1;  // its main thread's mean share on a CPU then; negative: not known
};

// One file's text, and back (nullopt: not such a file, e.g. half written by an older version).
std::string format_arrivals(const RankArrivals& arrivals);
std::optional<RankArrivals> parse_arrivals(std::string_view text);

struct ArrivalVerdict {
  // Whether the rank below passes the test (judge_arrivals); else it is only the rank that
  // arrived last most often, and nobody is a straggler.
  bool straggler = false;
  int rank = -1;
  std::string host;
  std::size_t last = 0;   // collectives it arrived last at
  std::size_t calls = 0;  // collectives compared
  // The median, over the collectives, of how much later it arrived than the median of the others
  // (their wait less its own).
  double lag_seconds = 0;
  // The others' time lost waiting for it, as a share of its time over those collectives (0.2: the
  // others waited for it a fifth of the time).
  double lag_share = 0;
  double waited_seconds = 0;            // its own time inside those collectives
  double others_waited_seconds = 0;     // the median of the others' time inside them
  Activity doing = Activity::kUnknown;  // what it did outside them, as its logger last published
  double cpu_share = -1;                // its share on a CPU then (negative: not known)
  double others_cpu_share = -1;         // the median of the other ranks' (negative: none known)
};

// The straggler among `ranks` (two or more, one entry each), judged on the last (at most
// kArrivalVerdictCalls) collectives that all of them published: the rank that arrived last most
// often is one when it arrived last in kArrivalLastShare of them, the others lost more than
// `threshold` of the time waiting for it, and at least `min_excess_seconds` per collective (timer
// noise at microsecond collectives names nobody). nullopt: fewer than kArrivalMinCalls
// collectives in common (nothing can be said either way).
std::optional<ArrivalVerdict> judge_arrivals(
    const std::vector<RankArrivals>& ranks, double threshold = kDefaultStragglerThreshold,
    double min_excess_seconds = kStragglerMinExcessSeconds);

// "rank 1 on node2 arrived last in 96 % of the last 200 collectives, 0.11 s after the median: a
// straggler; the others waited for it 20 % of the time (it waited 0.020 s in them, the median
// rank 4.4 s)": the live line's and the reports' words.
std::string arrival_verdict_text(const ArrivalVerdict& verdict);

// The live watch's memory: the straggler its last line named, if any.
struct NamedStraggler {
  int rank = -1;
  std::string host;
};

// The live line when the verdict changes, "" when it does not: a straggler named (another than
// `named`, or after none), with what it is doing ("...: a straggler; it is computing, not
// waiting; the others waited ..."), or `named` no longer one. Updates `named`. A verdict of too few
// collectives (nullopt) changes nothing: it says neither.
std::string straggler_change_line(const std::optional<ArrivalVerdict>& verdict,
                                  std::optional<NamedStraggler>& named);

// `dtrain stats`' lines under its table: the straggler by arrival, or that `ranks` ranks' last
// collectives name none.
std::string arrival_section_text(const ArrivalVerdict& verdict, std::size_t ranks);

}  // namespace dtrain::report
