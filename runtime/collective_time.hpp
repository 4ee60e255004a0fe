// The time a rank spends inside collectives, counted within the step it belongs to: the Meter's
// step record carries the part of each collective's enter-to-exit interval that falls inside the
// step's own interval. Summing every collective since the previous record instead charged the
// collectives that ran between two timed steps (a checkpoint's broadcast, Preemption's vote, an
// evaluation's allreduce, or the gradient allreduce of a loop that times only the compute) to the
// next step: `dtrain stats` showed comm % = 518.4 for such a C++ loop. Collectives run one at a
// time on the communicator's progress thread, so their intervals never overlap and the total is
// never more than the step. Pure: the caller passes the time points. Internal to libdtrain.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace dtrain::runtime {

class CollectiveTime {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // Intervals kept until a step takes them. A program that runs collectives but records no step
  // would grow the list without end; past this many the oldest half is dropped (a step with more
  // collectives than that, timed around all of them, would be undercounted).
  static constexpr std::size_t kMaxKept = std::size_t{1} << 16;

  void enter(TimePoint at);
  void exit(TimePoint at);
  // Seconds inside collectives within [begin, end] (a collective still running counts up to
  // `end`), at most end - begin; then forgets the finished ones: a later step begins after `end`.
  double take(TimePoint begin, TimePoint end);

 private:
  std::vector<std::pair<TimePoint, TimePoint>> finished_;
  std::optional<TimePoint> running_;  // entered, not yet exited
};

}  // namespace dtrain::runtime
