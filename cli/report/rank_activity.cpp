#include "report/rank_activity.hpp"

#include <algorithm>

#include "report/plain_number.hpp"

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

double sample_cpu_share(const ProcessSample& before, const ProcessSample& now, double seconds) {
  if (!(seconds > 0)) return -1;
  return std::clamp((now.cpu_seconds - before.cpu_seconds) / seconds, 0.0, 1.0);
}

void ActivityTally::add(Activity activity, double cpu_share) {
  shares_[count_ % kActivitySamples] = cpu_share;
  ring_[count_++ % kActivitySamples] = activity;
}

double ActivityTally::cpu_share() const {
  const std::size_t n = count_ < kActivitySamples ? count_ : kActivitySamples;
  double sum = 0;
  std::size_t known = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (shares_[i] < 0) continue;
    sum += shares_[i];
    ++known;
  }
  return known > 0 ? sum / static_cast<double>(known) : -1;
}

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

std::string activity_text(Activity activity, double cpu_share, double others_cpu_share) {
  const bool running = activity == Activity::kComputing || activity == Activity::kSleeping;
  if (running && cpu_share >= 0) {
    if (cpu_share >= kComputingCpuShare) {
      return "it is computing, not waiting (on a CPU " + percent_text(cpu_share) +
             " of its time outside collectives" +
             (others_cpu_share >= 0 ? ", the others " + percent_text(others_cpu_share) : "") + ")";
    }
    return "it is off the CPU " + percent_text(1 - cpu_share) + " of its time outside collectives" +
           (others_cpu_share >= 0 ? ", the others " + percent_text(1 - others_cpu_share) : "") +
           " (sleeping, loading data, or waiting for a lock or a CPU: not computing then)";
  }
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
