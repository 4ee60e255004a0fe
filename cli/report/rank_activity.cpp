#include "report/rank_activity.hpp"

namespace dtrain::report {

std::string_view activity_word(Activity activity) {
  switch (activity) {
    case Activity::kComputing:
      return "computing";
    case Activity::kSleeping:
      return "sleeping";
    case Activity::kBlocked:
      return "blocked";
    case Activity::kStopped:
      return "stopped";
    case Activity::kUnknown:
      break;
  }
  return "";
}

Activity activity_from_word(std::string_view word) {
  for (const Activity a :
       {Activity::kComputing, Activity::kSleeping, Activity::kBlocked, Activity::kStopped}) {
    if (word == activity_word(a)) return a;
  }
  return Activity::kUnknown;
}

std::optional<Activity> sample_activity(const ProcessSample& before, const ProcessSample& now,
                                        double seconds, bool inside) {
  if (inside) return std::nullopt;
  switch (now.state) {
    case 'T':
    case 't':
      return Activity::kStopped;
    case 'D':
      return Activity::kBlocked;
    case 'Z':
    case 'X':
      return std::nullopt;
    default:
      break;
  }
  const double share = seconds > 0 ? (now.cpu_seconds - before.cpu_seconds) / seconds : 0;
  return share >= 0.5 || now.state == 'R' ? Activity::kComputing : Activity::kSleeping;
}

void ActivityTally::add(Activity activity) { ring_[count_++ % kActivitySamples] = activity; }

Activity ActivityTally::most() const {
  std::array<std::size_t, 5> counts{};
  const std::size_t n = count_ < kActivitySamples ? count_ : kActivitySamples;
  for (std::size_t i = 0; i < n; ++i) ++counts[static_cast<std::size_t>(ring_[i])];
  Activity best = Activity::kUnknown;
  for (std::size_t k = 1; k < counts.size(); ++k) {
    if (counts[k] > 0 && counts[k] >= counts[static_cast<std::size_t>(best)]) {
      best = static_cast<Activity>(k);
    }
  }
  return best;
}

std::string activity_text(Activity activity) {
  switch (activity) {
    case Activity::kComputing:
      return "it is computing, not waiting";
    case Activity::kSleeping:
      return "it is sleeping outside collectives (not computing)";
    case Activity::kBlocked:
      return "it is blocked in the kernel (D state) outside collectives (not computing: reading "
             "files?)";
    case Activity::kStopped:
      return "it is stopped (SIGSTOP or a debugger)";
    case Activity::kUnknown:
      break;
  }
  return "";
}

}  // namespace dtrain::report
