// A rank's steps in bounded records (docs/metrics.md, "type":"interval"): the Meter hands each
// step here and writes what comes back, either the step in full (a "step" record) or, every
// interval of steps or seconds, one record of the steps between: their count, and of each measure
// (samples, seconds, comm_seconds, data_seconds) the sum, minimum, maximum and a log-bucket
// histogram (records/log_histogram.hpp). A 1,024-rank job of 50,000 steps an hour then writes some
// hundreds of records per rank and hour instead of 50,000. The first steps of a Meter, and a step
// far slower than the rank's mean, stay whole, for the readers that look at single steps (the
// first step's start, a stall). Pure: the caller passes the times.
#pragma once

#include <cstdint>
#include <optional>

#include "records/log_histogram.hpp"

namespace dtrain::records {

// One interval's steps. `seconds`' count is the number of steps; `data_seconds` holds only the
// steps that reported data-loading time (count 0: none did). comm_seconds is each step's capped
// at its seconds, as the readers count it.
struct StepInterval {
  long long first_step = 0;
  long long last_step = 0;
  double began = 0;  // Unix seconds: the first step's start
  LogHistogram samples;
  LogHistogram seconds;
  LogHistogram comm_seconds;
  LogHistogram data_seconds;
  long long count() const { return seconds.count(); }
  bool operator==(const StepInterval& other) const = default;
};

// One step as the Meter measured it.
struct StepMeasure {
  long long step = 0;
  long long samples = 0;
  double seconds = 0;
  double comm_seconds = 0;
  std::optional<double> data_seconds;
  double ended = 0;  // Unix seconds
};

// When an interval closes: after `steps` steps or `max_seconds` since its first step began,
// whichever first, but never before `min_seconds` (so that the records per hour are bounded at any
// step rate: at most 3600 / min_seconds). The defaults keep a rank under 1 MiB an hour
// (docs/metrics.md has the measured figure).
struct IntervalPolicy {
  long long steps = 100;
  double min_seconds = 5;
  double max_seconds = 60;
  // The Meter's first this many steps are written in full.
  long long first_full = 20;
  // A later step this many times the mean of the rank's steps so far is written in full ...
  double slow_factor = 4;
  // ... at most this many per interval.
  int slow_full_per_interval = 2;
};

class IntervalAccumulator {
 public:
  explicit IntervalAccumulator(IntervalPolicy policy = {}) : policy_(policy) {}

  struct Added {
    // An interval the step closed before it joined (its number does not follow the interval's
    // last): write it first.
    std::optional<StepInterval> closed;
    bool full = false;  // write the step in full: it is in no interval
  };
  Added add(const StepMeasure& step);

  // The open interval when it is due at Unix time `now` (see IntervalPolicy), else nothing.
  std::optional<StepInterval> take_due(double now);
  // The open interval, if it holds a step (at a flush and when the Meter closes).
  std::optional<StepInterval> take();

 private:
  IntervalPolicy policy_;
  std::optional<StepInterval> open_;
  int slow_in_open_ = 0;
  long long steps_seen_ = 0;
  double seconds_seen_ = 0;
};

}  // namespace dtrain::records
