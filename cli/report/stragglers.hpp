// Which ranks (or nodes) are stragglers, and how sure the verdict is. Each one is compared with the
// others, not with a median it takes part in: at 2 ranks the median of both is their mean, so a
// rank 1.9x slower than its peer read "30 % slower", and a run of microsecond steps named both
// ranks for noise. A straggler is more than `threshold` slower per sample than the median of the
// *other* candidates (leave-one-out) and also at least `min_excess_seconds` longer per step, so
// timer noise at microsecond steps is never named. How sure: in how many of its last steps it was
// the slowest (the busiest: compute and data, not waiting). Pure: sums and step times in, verdicts
// out; StatsBuilder hands them in.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dtrain::report {

// A straggler is this much slower per sample than the median of the others (0.10 = 10 %) ...
inline constexpr double kDefaultStragglerThreshold = 0.10;
// ... and at least this much longer per step: a 5 us step that takes 10 us on one rank is noise
// (scheduling, timer resolution), not a rank the job waits for.
inline constexpr double kStragglerMinExcessSeconds = 0.5e-3;
// The verdict's certainty counts the last this many steps of each rank.
inline constexpr std::size_t kStragglerVerdictSteps = 200;

// One rank, or the ranks of one node, as the test sees it: sums over its steps.
struct StragglerCandidate {
  std::vector<int> ranks;  // one for a rank
  std::string host;
  long long samples = 0;
  long long steps = 0;  // a node: the most of its ranks'
  double seconds = 0;
  double comm_seconds = 0;  // waiting in collectives
  double data_seconds = 0;  // loading data
  // From count_slowest: of its last steps compared with the others', in how many it was slowest.
  long long slowest_steps = 0;
  long long steps_compared = 0;
};

struct Straggler {
  std::string kind;        // "rank" or "node"
  int rank = -1;           // for a rank
  std::string host;        // the rank's host, or the node
  std::vector<int> ranks;  // for a node: its ranks
  // Fraction over the median of the others' time per sample (0.25 = 25 % slower): of the busy
  // time (compute and data) or of the whole step, whichever passes the test by more.
  double slower_by = 0;
  double excess_seconds_per_step = 0;  // the same difference per step
  std::string cause;                   // "compute", "data loading" or "waiting in collectives"
  // Seconds per sample of the cause, this one and the median of the others.
  double cause_seconds_per_sample = 0;
  double median_cause_seconds_per_sample = 0;
  long long slowest_steps = 0;  // how sure, as in StragglerCandidate
  long long steps_compared = 0;
};

// The stragglers among `candidates` (two or more), slowest first; `kind` is "rank" or "node".
// In a synchronous job every rank's step lasts as long as the slowest one's, so the straggler
// shows as more busy time (compute or data) while the others wait longer; both are checked.
std::vector<Straggler> find_stragglers(const std::vector<StragglerCandidate>& candidates,
                                       const std::string& kind, double threshold,
                                       double min_excess_seconds = kStragglerMinExcessSeconds);

struct SlowestCount {
  long long slowest = 0;   // steps in which one of its ranks was the busiest of all
  long long compared = 0;  // steps it recorded that two or more candidates recorded
};

// `busy[i]`: rank i's busy seconds (step minus waiting) of its last steps, oldest first; the steps
// of all ranks are matched from the end (the last with the last). `group_of[i]`: the candidate
// rank i belongs to (itself, or its node), below `groups`. Ties count for every tied rank.
std::vector<SlowestCount> count_slowest(const std::vector<std::vector<double>>& busy,
                                        const std::vector<std::size_t>& group_of,
                                        std::size_t groups);

// "  rank 1 on node0: 90 % slower ..." lines under a header that states the test; "" for none.
std::string format_stragglers(const std::vector<Straggler>& stragglers, double threshold,
                              double min_excess_seconds = kStragglerMinExcessSeconds);

// "the slowest rank in 198 of the last 200 steps"; "" when no step was compared.
std::string certainty_text(const Straggler& s);

}  // namespace dtrain::report
