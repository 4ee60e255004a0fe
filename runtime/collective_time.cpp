#include "collective_time.hpp"

#include <algorithm>

namespace dtrain::runtime {
namespace {

std::chrono::duration<double> overlap(CollectiveTime::TimePoint a, CollectiveTime::TimePoint b,
                                      CollectiveTime::TimePoint begin,
                                      CollectiveTime::TimePoint end) {
  const auto from = std::max(a, begin);
  const auto to = std::min(b, end);
  return to > from ? std::chrono::duration<double>(to - from) : std::chrono::duration<double>(0);
}

}  // namespace

void CollectiveTime::enter(TimePoint at) { running_ = at; }

void CollectiveTime::exit(TimePoint at) {
  // An exit without its enter (the Meter was created while a collective ran) has no interval.
  if (!running_) return;
  if (finished_.size() >= kMaxKept) {
    finished_.erase(finished_.begin(),
                    finished_.begin() + static_cast<std::ptrdiff_t>(kMaxKept / 2));
  }
  finished_.emplace_back(*running_, at);
  running_.reset();
}

double CollectiveTime::take(TimePoint begin, TimePoint end) {
  if (end <= begin) {
    finished_.clear();
    return 0;
  }
  std::chrono::duration<double> total(0);
  for (const auto& [a, b] : finished_) total += overlap(a, b, begin, end);
  if (running_) total += overlap(*running_, end, begin, end);
  finished_.clear();
  return std::min(total.count(), std::chrono::duration<double>(end - begin).count());
}

}  // namespace dtrain::runtime
