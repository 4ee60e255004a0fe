#include "report/stragglers.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "report/plain_number.hpp"

namespace dtrain::report {
namespace {

// The median of all values but one, for each one: sorted once, so 1,024 ranks cost one sort
// rather than 1,024 (the values without one are the sorted values with its position skipped).
class LeaveOneOut {
 public:
  explicit LeaveOneOut(const std::vector<double>& values) : position_(values.size()) {
    std::vector<std::size_t> order(values.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
    for (std::size_t p = 0; p < order.size(); ++p) {
      sorted_.push_back(values[order[p]]);
      position_[order[p]] = p;
    }
  }

  double median_of_others(std::size_t i) const {
    const std::size_t n = sorted_.size() - 1;
    if (n == 0) return 0;
    const std::size_t skip = position_[i];
    const auto at = [&](std::size_t j) { return sorted_[j < skip ? j : j + 1]; };
    return n % 2 == 1 ? at(n / 2) : (at(n / 2 - 1) + at(n / 2)) / 2;
  }

 private:
  std::vector<double> sorted_;
  std::vector<std::size_t> position_;
};

// Seconds per sample of a candidate, split by where the time went.
struct PerSample {
  double step = 0;     // all of it
  double comm = 0;     // waiting in collectives
  double data = 0;     // loading data
  double compute = 0;  // the rest
  double busy() const { return step - comm; }
};

PerSample per_sample(const StragglerCandidate& c) {
  PerSample p;
  if (c.samples <= 0) return p;
  const auto n = static_cast<double>(c.samples);
  p.step = c.seconds / n;
  p.comm = c.comm_seconds / n;
  p.data = c.data_seconds / n;
  p.compute = std::max(0.0, p.step - p.comm - p.data);
  return p;
}

// How much slower `value` is than `others` (a fraction), when it is slower by more than the
// threshold and by at least the floor per step; 0 otherwise.
double slower_by(double value, double others, double samples_per_step, double threshold,
                 double min_excess_seconds) {
  if (!(others > 0)) return 0;
  const double by = value / others - 1;
  if (by <= threshold || (value - others) * samples_per_step < min_excess_seconds) return 0;
  return by;
}

}  // namespace

std::vector<Straggler> find_stragglers(const std::vector<StragglerCandidate>& candidates,
                                       const std::string& kind, double threshold,
                                       double min_excess_seconds) {
  std::vector<PerSample> ps;
  std::vector<double> step, busy, comm, data, compute;
  for (const auto& c : candidates) {
    const PerSample p = per_sample(c);
    ps.push_back(p);
    step.push_back(p.step);
    busy.push_back(p.busy());
    comm.push_back(p.comm);
    data.push_back(p.data);
    compute.push_back(p.compute);
  }
  const LeaveOneOut step_others(step), busy_others(busy), comm_others(comm), data_others(data),
      compute_others(compute);
  std::vector<Straggler> out;
  for (std::size_t i = 0; i < candidates.size() && candidates.size() >= 2; ++i) {
    const StragglerCandidate& c = candidates[i];
    const PerSample& p = ps[i];
    const double per_step =
        c.steps > 0 ? static_cast<double>(c.samples) / static_cast<double>(c.steps) : 0;
    const double m_busy = busy_others.median_of_others(i);
    const double m_step = step_others.median_of_others(i);
    const double by_busy = slower_by(p.busy(), m_busy, per_step, threshold, min_excess_seconds);
    const double by_step = slower_by(p.step, m_step, per_step, threshold, min_excess_seconds);
    if (by_busy <= 0 && by_step <= 0) continue;
    Straggler s;
    s.kind = kind;
    s.slower_by = std::max(by_busy, by_step);
    s.excess_seconds_per_step =
        (by_busy >= by_step ? p.busy() - m_busy : p.step - m_step) * per_step;
    const PerSample m{m_step, comm_others.median_of_others(i), data_others.median_of_others(i),
                      compute_others.median_of_others(i)};
    const double excess_compute = p.compute - m.compute;
    const double excess_data = p.data - m.data;
    const double excess_comm = p.comm - m.comm;
    if (excess_data >= excess_compute && excess_data >= excess_comm) {
      s.cause = "data loading";
      s.cause_seconds_per_sample = p.data;
      s.median_cause_seconds_per_sample = m.data;
    } else if (excess_compute >= excess_comm) {
      s.cause = "compute";
      s.cause_seconds_per_sample = p.compute;
      s.median_cause_seconds_per_sample = m.compute;
    } else {
      s.cause = "waiting in collectives";
      s.cause_seconds_per_sample = p.comm;
      s.median_cause_seconds_per_sample = m.comm;
    }
    s.ranks = c.ranks;
    s.host = c.host;
    if (kind == "rank" && !c.ranks.empty()) s.rank = c.ranks.front();
    s.slowest_steps = c.slowest_steps;
    s.steps_compared = c.steps_compared;
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const Straggler& a, const Straggler& b) {
    return a.slower_by > b.slower_by;
  });
  return out;
}

std::vector<SlowestCount> count_slowest(const std::vector<std::vector<double>>& busy,
                                        const std::vector<std::size_t>& group_of,
                                        std::size_t groups) {
  std::vector<SlowestCount> out(groups);
  std::size_t longest = 0;
  for (const auto& b : busy) longest = std::max(longest, b.size());
  std::vector<char> present(groups), slowest(groups);
  for (std::size_t back = 0; back < longest; ++back) {  // the last step, then the one before
    double max = 0;
    std::size_t recorded = 0;
    std::fill(present.begin(), present.end(), 0);
    for (std::size_t r = 0; r < busy.size(); ++r) {
      if (busy[r].size() <= back) continue;
      const double v = busy[r][busy[r].size() - 1 - back];
      max = recorded == 0 ? v : std::max(max, v);
      ++recorded;
      present[group_of[r]] = 1;
    }
    if (std::count(present.begin(), present.end(), 1) < 2) continue;
    std::fill(slowest.begin(), slowest.end(), 0);
    for (std::size_t r = 0; r < busy.size(); ++r) {
      if (busy[r].size() > back && busy[r][busy[r].size() - 1 - back] >= max) {
        slowest[group_of[r]] = 1;
      }
    }
    for (std::size_t g = 0; g < groups; ++g) {
      out[g].compared += present[g];
      out[g].slowest += slowest[g];
    }
  }
  return out;
}

std::string certainty_text(const Straggler& s) {
  if (s.steps_compared == 0) return "";
  return "the slowest " + s.kind + " in " + std::to_string(s.slowest_steps) + " of the last " +
         std::to_string(s.steps_compared) + (s.steps_compared == 1 ? " step" : " steps");
}

std::string format_stragglers(const std::vector<Straggler>& stragglers, double threshold,
                              double min_excess_seconds) {
  if (stragglers.empty()) return "";
  std::string out = "stragglers (more than " + plain_number(threshold * 100) + " % and " +
                    duration_text(min_excess_seconds) +
                    " a step slower than the median of the others):\n";
  char line[512];
  for (const auto& s : stragglers) {
    const std::string who = s.kind == "rank"
                                ? "rank " + std::to_string(s.rank) + " on " + s.host
                                : "node " + s.host + " (" + std::to_string(s.ranks.size()) +
                                      (s.ranks.size() == 1 ? " rank)" : " ranks)");
    const std::string sure = certainty_text(s);
    std::snprintf(line, sizeof line,
                  "  %s: %.0f %% slower (%s a step); cause: %s (%s per sample, others %s)%s%s\n",
                  who.c_str(), s.slower_by * 100, duration_text(s.excess_seconds_per_step).c_str(),
                  s.cause.c_str(), duration_text(s.cause_seconds_per_sample).c_str(),
                  duration_text(s.median_cause_seconds_per_sample).c_str(),
                  sure.empty() ? "" : "; ", sure.c_str());
    out += line;
  }
  return out;
}

}  // namespace dtrain::report
