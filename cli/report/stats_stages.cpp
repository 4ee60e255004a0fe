#include "report/stats_stages.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "report/natural_order.hpp"

namespace dtrain::report {
namespace {

// The straggler test's view of a rank or of a node's ranks together.
StragglerCandidate candidate(const std::vector<const RankStats*>& ranks, const SlowestCount& n) {
  StragglerCandidate c;
  for (const RankStats* r : ranks) {
    c.ranks.push_back(r->rank);
    add_saturating(c.samples, r->samples);
    c.steps = std::max(c.steps, r->steps);
    c.seconds += r->seconds;
    c.comm_seconds += r->comm_seconds;
    c.data_seconds += r->data_seconds;
  }
  c.host = ranks.front()->host;
  c.slowest_steps = n.slowest;
  c.steps_compared = n.compared;
  return c;
}

NodeStats node_stats(const std::string& host, const std::vector<const RankStats*>& ranks) {
  NodeStats n;
  n.host = host;
  for (const RankStats* r : ranks) {
    n.ranks.push_back(r->rank);
    add_saturating(n.samples, r->samples);
    n.slowest_rank_seconds = std::max(n.slowest_rank_seconds, r->seconds);
  }
  if (n.slowest_rank_seconds > 0) {
    n.samples_per_second = static_cast<double>(n.samples) / n.slowest_rank_seconds;
  }
  return n;
}

}  // namespace

void add_saturating(long long& total, long long n) {
  if (__builtin_add_overflow(total, n, &total)) {
    total = n < 0 ? std::numeric_limits<long long>::min() : std::numeric_limits<long long>::max();
  }
}

RankStats rank_stats(int rank, const std::vector<KeptSteps>& steps) {
  RankStats s;
  s.rank = rank;
  std::vector<double> step_seconds;
  // With interval records the percentiles come from one histogram of every step.
  std::optional<records::LogHistogram> histogram;
  for (const KeptSteps& k : steps) {
    if (k.histogram && !histogram) {
      histogram.emplace();
      for (double v : step_seconds) histogram->add(v);
    }
    s.steps += k.count;
    add_saturating(s.samples, k.samples);
    s.seconds += k.seconds;
    if (k.comm_seconds) {
      s.has_comm = true;
      // A step cannot wait longer than it lasts: older writers counted collectives outside it.
      s.comm_seconds += std::min(*k.comm_seconds, k.seconds);
    }
    if (k.data_seconds) {
      s.has_data = true;
      s.data_seconds += *k.data_seconds;
    }
    if (k.histogram) {
      histogram->merge(*k.histogram);
    } else if (histogram) {
      histogram->add(k.seconds);
    } else {
      step_seconds.push_back(k.seconds);
    }
  }
  if (s.seconds > 0) {
    s.samples_per_second = static_cast<double>(s.samples) / s.seconds;
    s.comm_share = s.comm_seconds / s.seconds;
    s.data_share = s.data_seconds / s.seconds;
  }
  s.p50_step_seconds = histogram ? histogram->percentile(50) : percentile(step_seconds, 50);
  s.p95_step_seconds = histogram ? histogram->percentile(95) : percentile(step_seconds, 95);
  return s;
}

// A step's busy time is what it did not wait in collectives (the wait capped at the step, as for
// comm %): in a synchronous job the straggler is the busiest rank of the step. An interval's steps
// count each with the interval's mean, so the ranks' last steps still match from the end.
std::vector<double> last_busy_seconds(const std::vector<KeptSteps>& steps) {
  std::vector<double> out;
  for (auto it = steps.rbegin(); it != steps.rend() && out.size() < kStragglerVerdictSteps; ++it) {
    const KeptSteps& k = *it;
    const double busy = k.seconds - std::min(k.comm_seconds.value_or(0.0), k.seconds);
    const auto n =
        std::min<long long>(k.count, static_cast<long long>(kStragglerVerdictSteps - out.size()));
    out.insert(out.end(), static_cast<std::size_t>(n), busy / static_cast<double>(k.count));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

void add_run_totals(RunStats& out) {
  for (const RankStats& s : out.ranks) {
    add_saturating(out.total_samples, s.samples);
    out.slowest_rank_seconds = std::max(out.slowest_rank_seconds, s.seconds);
  }
  if (out.slowest_rank_seconds > 0) {
    out.total_samples_per_second =
        static_cast<double>(out.total_samples) / out.slowest_rank_seconds;
  }
}

void add_stragglers_and_nodes(RunStats& out, const std::map<int, std::vector<double>>& busy_by_rank,
                              double straggler_threshold) {
  // The ranks with samples, and the busy seconds of their last steps for the verdicts' certainty.
  std::vector<const RankStats*> counted;
  std::vector<std::vector<double>> busy;
  // Indexes into counted, by host in natural order: the per-node table reads node2 before node10.
  std::map<std::string, std::vector<std::size_t>, NaturalLess> by_host;
  for (const auto& r : out.ranks) {
    if (r.samples == 0) continue;
    by_host[r.host].push_back(counted.size());
    counted.push_back(&r);
    const auto it = busy_by_rank.find(r.rank);
    busy.push_back(it != busy_by_rank.end() ? it->second : std::vector<double>{});
  }
  if (counted.size() >= 2) {
    std::vector<std::size_t> itself(counted.size());
    for (std::size_t i = 0; i < itself.size(); ++i) itself[i] = i;
    const auto counts = count_slowest(busy, itself, counted.size());
    std::vector<StragglerCandidate> candidates;
    for (std::size_t i = 0; i < counted.size(); ++i) {
      candidates.push_back(candidate({counted[i]}, counts[i]));
    }
    out.stragglers = find_stragglers(candidates, "rank", straggler_threshold);
  }
  if (by_host.size() < 2 || by_host.count("?") != 0) return;
  std::vector<std::size_t> node_of(counted.size());
  std::size_t node = 0;
  for (const auto& [host, indexes] : by_host) {
    for (std::size_t i : indexes) node_of[i] = node;
    ++node;
  }
  const auto counts = count_slowest(busy, node_of, by_host.size());
  std::vector<StragglerCandidate> candidates;
  node = 0;
  for (const auto& [host, indexes] : by_host) {
    std::vector<const RankStats*> ranks;
    for (std::size_t i : indexes) ranks.push_back(counted[i]);
    candidates.push_back(candidate(ranks, counts[node++]));
    out.nodes.push_back(node_stats(host, ranks));
  }
  // Nodes of one rank each would repeat the ranks' verdicts line for line.
  if (counted.size() > by_host.size()) {
    for (auto& s : find_stragglers(candidates, "node", straggler_threshold)) {
      out.stragglers.push_back(std::move(s));
    }
  }
}

RankResources average_resources(int rank, const ResourceSums& a) {
  RankResources r;
  r.rank = rank;
  r.records = a.records;
  const double n = static_cast<double>(a.records);
  r.cpu_percent = a.interval > 0 ? a.cpu_seconds / a.interval * 100 : a.cpu_percent / n;
  r.rss_bytes = a.rss_bytes / n;
  r.gpu = a.gpu;
  const auto mean = [](double sum, long long k) {
    return k > 0 ? std::optional<double>(sum / static_cast<double>(k)) : std::nullopt;
  };
  r.gpu_util_percent = mean(a.util, a.util_n);
  r.gpu_memory_bytes = mean(a.memory, a.memory_n);
  r.gpu_power_watts = mean(a.power, a.power_n);
  return r;
}

std::string renumbered_note(int attempt, long long first_step) {
  // Every record before is then "redone"; after a resume that is a numbering mistake, and the
  // throughput silently loses the failed attempts' work.
  return "attempt " + std::to_string(attempt) + " began at step " + std::to_string(first_step) +
         ", no later than the attempt before it: all of that attempt's steps count as redone; if "
         "it resumed from a checkpoint, its steps were numbered from the start again (number them "
         "on from the checkpoint: Meter.step() without step= after load_latest(), "
         "docs/metrics.md)";
}

}  // namespace dtrain::report
