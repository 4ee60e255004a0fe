#include "records/step_interval.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace dtrain::records {

IntervalAccumulator::Added IntervalAccumulator::add(const StepMeasure& s) {
  Added out;
  const bool slow = steps_seen_ >= std::max<long long>(policy_.first_full, 1) &&
                    s.seconds > policy_.slow_factor * seconds_seen_ /
                                    static_cast<double>(std::max<long long>(steps_seen_, 1)) &&
                    slow_in_open_ < policy_.slow_full_per_interval;
  const bool first = steps_seen_ < policy_.first_full;
  if (steps_seen_ < std::numeric_limits<long long>::max()) ++steps_seen_;
  seconds_seen_ += s.seconds;
  if (first || slow) {
    if (slow) ++slow_in_open_;
    out.full = true;
    return out;
  }
  // An interval holds rising step numbers (a slow step written whole leaves a hole in it): a
  // number that goes back (the code numbered its steps from 0 again) starts a new one, so the
  // readers' restart rule (a later step s replaces the records of steps >= s) holds per record.
  if (open_ && s.step <= open_->last_step) out.closed = take();
  if (!open_) {
    open_.emplace();
    open_->first_step = s.step;
    open_->began = s.ended - s.seconds;
  }
  StepInterval& i = *open_;
  i.last_step = s.step;
  i.samples.add(static_cast<double>(s.samples));
  i.seconds.add(s.seconds);
  // A step cannot wait longer than it lasts (the readers cap older writers' figures alike).
  i.comm_seconds.add(std::min(s.comm_seconds, s.seconds));
  if (s.data_seconds) i.data_seconds.add(*s.data_seconds);
  return out;
}

std::optional<StepInterval> IntervalAccumulator::take_due(double now) {
  if (!open_) return std::nullopt;
  const double age = now - open_->began;
  if (age >= policy_.max_seconds ||
      (open_->count() >= policy_.steps && age >= policy_.min_seconds)) {
    return take();
  }
  return std::nullopt;
}

std::optional<StepInterval> IntervalAccumulator::take() {
  slow_in_open_ = 0;
  return std::exchange(open_, std::nullopt);
}

}  // namespace dtrain::records
