#include "report/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "affinity/cpuset.hpp"
#include "records/log_line.hpp"
#include "report/natural_order.hpp"
#include "report/plain_number.hpp"

namespace dtrain::report {
namespace {

// Sample counts a file claims can be anything up to INT64_MAX: totals stop there rather than wrap
// into negative numbers.
void add_saturating(long long& total, long long n) {
  if (__builtin_add_overflow(total, n, &total)) {
    total = n < 0 ? std::numeric_limits<long long>::min() : std::numeric_limits<long long>::max();
  }
}

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

// Where a note says what comm % leaves out. The Meter times only the collectives of the Context's
// communicator (the torch backend "dtrain" runs on it); DDP's allreduce on gloo or NCCL, Horovod's
// or a direct NCCL call never pass through it, so their time is in the step but counted as compute
// (a DDP job showed 0.8 % where 38.4 % of its steps went to the allreduce).
void add_comm_notes(RunStats& out) {
  int with_comm = 0;
  bool any_seen = false;
  for (const auto& r : out.ranks) {
    if (!r.has_comm) continue;
    ++with_comm;
    any_seen = any_seen || r.comm_seconds > 0;
  }
  if (with_comm == 0) return;
  out.notes.push_back(
      "comm % is the time inside dtrain's own collectives during the timed steps "
      "(torch.distributed's "
      "and DDP's on backend dtrain among them); another library's collectives (torch.distributed "
      "on "
      "gloo or NCCL, Horovod, NCCL called directly) are not seen and count as compute, here and in "
      "the stragglers' causes");
  if (with_comm >= 2 && !any_seen) {
    out.notes.push_back(
        "no dtrain collective ran inside a timed step on any rank: the gradients, if exchanged, "
        "went through another library, whose time is not in comm %");
  }
}

}  // namespace

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const auto index = static_cast<std::size_t>(std::max(1.0, rank)) - 1;
  return values[std::min(index, values.size() - 1)];
}

void StatsBuilder::add(const records::MetricRecord& r) {
  if (r.type == records::RecordType::kResource) {
    ResourceAcc& a = resources_[r.rank];
    a.records += 1;
    a.cpu_seconds += r.cpu_percent / 100 * r.interval;
    a.interval += r.interval;
    a.cpu_percent += r.cpu_percent;
    a.rss_bytes += static_cast<double>(r.rss_bytes);
    if (r.gpu) {
      a.gpu = r.gpu->index;
      if (r.gpu->util_percent) {
        a.util += *r.gpu->util_percent;
        ++a.util_n;
      }
      if (r.gpu->memory_bytes) {
        a.memory += static_cast<double>(*r.gpu->memory_bytes);
        ++a.memory_n;
      }
      if (r.gpu->power_watts) {
        a.power += *r.gpu->power_watts;
        ++a.power_n;
      }
    }
    return;
  }
  if (r.type != records::RecordType::kStep && r.type != records::RecordType::kInterval) return;
  Acc& acc = ranks_[r.rank];
  const bool interval = r.type == records::RecordType::kInterval;
  const long long first_step = interval ? r.step_interval.first_step : r.step;
  acc.rank = r.rank;
  if (r.attempt > acc.attempt) {
    if (!acc.steps.empty() && first_step <= acc.steps.front().step) {
      renumbered_[r.attempt] = first_step;
    }
    // Resumed from a checkpoint: what the earlier attempt did from this step on was lost.
    while (!acc.steps.empty() && acc.steps.back().step >= first_step) {
      redone_ += acc.steps.back().count;
      acc.steps.pop_back();
    }
    acc.attempt = r.attempt;
  }
  if (interval) {
    const records::StepInterval& i = r.step_interval;
    Kept k{first_step,
           static_cast<long long>(i.samples.sum()),
           i.seconds.sum(),
           i.comm_seconds.sum(),
           std::nullopt,
           i.count(),
           std::make_shared<const records::LogHistogram>(i.seconds)};
    if (i.data_seconds.count() > 0) k.data_seconds = i.data_seconds.sum();
    acc.steps.push_back(std::move(k));
  } else {
    acc.steps.push_back({r.step, r.samples, r.seconds, r.comm_seconds, r.data_seconds, 1, nullptr});
  }
  if (r.time > 0) {
    const std::int64_t began =
        records::unix_seconds_to_micros(interval ? r.step_interval.began : r.time - r.seconds);
    auto [it, inserted] = first_step_start_.emplace(r.attempt, began);
    if (!inserted) it->second = std::min(it->second, began);
  }
}

void StatsBuilder::set_host(int rank, std::string host) { hosts_[rank] = std::move(host); }

// A step's busy time is what it did not wait in collectives (the wait capped at the step, as for
// comm %): in a synchronous job the straggler is the busiest rank of the step. An interval's steps
// count each with the interval's mean, so the ranks' last steps still match from the end.
std::vector<double> StatsBuilder::last_busy_seconds(const std::vector<Kept>& steps) {
  std::vector<double> out;
  for (auto it = steps.rbegin(); it != steps.rend() && out.size() < kStragglerVerdictSteps; ++it) {
    const Kept& k = *it;
    const double busy = k.seconds - std::min(k.comm_seconds.value_or(0.0), k.seconds);
    const auto n =
        std::min<long long>(k.count, static_cast<long long>(kStragglerVerdictSteps - out.size()));
    out.insert(out.end(), static_cast<std::size_t>(n), busy / static_cast<double>(k.count));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

RunStats StatsBuilder::finish(double straggler_threshold) const {
  RunStats out;
  out.straggler_threshold = straggler_threshold;
  out.first_step_start = first_step_start_;
  out.lost.redone_step_records = redone_;
  for (const auto& [rank, acc] : ranks_) {
    RankStats s;
    s.rank = rank;
    std::vector<double> step_seconds;
    // With interval records the percentiles come from one histogram of every step.
    std::optional<records::LogHistogram> histogram;
    for (const Kept& k : acc.steps) {
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
    if (auto it = hosts_.find(rank); it != hosts_.end()) s.host = it->second;
    if (s.seconds > 0) {
      s.samples_per_second = static_cast<double>(s.samples) / s.seconds;
      s.comm_share = s.comm_seconds / s.seconds;
      s.data_share = s.data_seconds / s.seconds;
    }
    s.p50_step_seconds = histogram ? histogram->percentile(50) : percentile(step_seconds, 50);
    s.p95_step_seconds = histogram ? histogram->percentile(95) : percentile(step_seconds, 95);
    add_saturating(out.total_samples, s.samples);
    out.slowest_rank_seconds = std::max(out.slowest_rank_seconds, s.seconds);
    out.ranks.push_back(std::move(s));
  }
  if (out.slowest_rank_seconds > 0) {
    out.total_samples_per_second =
        static_cast<double>(out.total_samples) / out.slowest_rank_seconds;
  }
  // The ranks with samples, and the busy seconds of their last steps for the verdicts' certainty.
  std::vector<const RankStats*> counted;
  std::vector<std::vector<double>> busy;
  // Indexes into counted, by host in natural order: the per-node table reads node2 before node10.
  std::map<std::string, std::vector<std::size_t>, NaturalLess> by_host;
  for (const auto& r : out.ranks) {
    if (r.samples == 0) continue;
    by_host[r.host].push_back(counted.size());
    counted.push_back(&r);
    busy.push_back(last_busy_seconds(ranks_.at(r.rank).steps));
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
  if (by_host.size() >= 2 && by_host.count("?") == 0) {
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
      out.nodes.push_back(std::move(n));
    }
    // Nodes of one rank each would repeat the ranks' verdicts line for line.
    if (counted.size() > by_host.size()) {
      for (auto& s : find_stragglers(candidates, "node", straggler_threshold)) {
        out.stragglers.push_back(std::move(s));
      }
    }
  }
  for (const auto& [rank, a] : resources_) {
    RankResources r;
    r.rank = rank;
    if (auto it = hosts_.find(rank); it != hosts_.end()) r.host = it->second;
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
    out.resources.push_back(std::move(r));
  }
  add_comm_notes(out);
  for (const auto& [attempt, first] : renumbered_) {
    // Every record before is then "redone"; after a resume that is a numbering mistake, and the
    // throughput silently loses the failed attempts' work.
    out.notes.push_back("attempt " + std::to_string(attempt) + " began at step " +
                        std::to_string(first) +
                        ", no later than the attempt before it: all of that attempt's steps count "
                        "as redone; if it resumed from a checkpoint, its steps were numbered from "
                        "the start again (number them on from the checkpoint: Meter.step() without "
                        "step= after load_latest(), docs/metrics.md)");
  }
  return out;
}

RunStats compute_stats(const std::vector<records::MetricRecord>& records,
                       double straggler_threshold) {
  StatsBuilder b;
  for (const auto& r : records) b.add(r);
  return b.finish(straggler_threshold);
}

std::string format_stats_table(const RunStats& stats) {
  if (stats.ranks.empty() && stats.arrivals) {
    // No step records (no Meter): what the collectives alone say.
    return "no step records (the ranks ran without libdtrain's Meter)\n" +
           arrival_section_text(*stats.arrivals, stats.arrival_ranks);
  }
  const bool comm = std::any_of(stats.ranks.begin(), stats.ranks.end(),
                                [](const RankStats& r) { return r.has_comm; });
  const bool data = std::any_of(stats.ranks.begin(), stats.ranks.end(),
                                [](const RankStats& r) { return r.has_data; });
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%6s %-12s %7s %12s %10s %11s %11s %11s", "rank", "host",
                "steps", "samples", "seconds", "samples/s", "p50 ms", "p95 ms");
  out += line;
  if (comm) out += "   comm %";
  if (data) out += "     data s";
  out += "\n";
  for (const auto& r : stats.ranks) {
    std::snprintf(line, sizeof line, "%6d %-12s %7lld %12lld %10.3f %11s %11s %11s", r.rank,
                  r.host.c_str(), r.steps, r.samples, r.seconds,
                  plain_number(r.samples_per_second).c_str(),
                  plain_number(r.p50_step_seconds * 1e3).c_str(),
                  plain_number(r.p95_step_seconds * 1e3).c_str());
    out += line;
    if (comm) {
      std::snprintf(line, sizeof line, " %9.1f", r.comm_share * 100);
      out += line;
    }
    if (data) {
      std::snprintf(line, sizeof line, " %10.3f", r.data_seconds);
      out += line;
    }
    out += "\n";
  }
  std::snprintf(line, sizeof line, "%6s %-12s %7s %12lld %10.3f %11s\n", "total", "", "",
                stats.total_samples, stats.slowest_rank_seconds,
                plain_number(stats.total_samples_per_second).c_str());
  out += line;
  for (const auto& note : stats.notes) out += "note: " + note + "\n";
  out += format_lost_time(stats.lost);
  if (!stats.nodes.empty()) {
    std::snprintf(line, sizeof line, "%-13s %13s %12s %10s %11s\n", "node", "ranks", "samples",
                  "seconds", "samples/s");
    out += line;
    for (const auto& n : stats.nodes) {
      std::snprintf(line, sizeof line, "%-13s %13s %12lld %10.3f %11s\n", n.host.c_str(),
                    affinity::format_ranges(n.ranks).c_str(), n.samples, n.slowest_rank_seconds,
                    plain_number(n.samples_per_second).c_str());
      out += line;
    }
  }
  out += format_stragglers(stats.stragglers, stats.straggler_threshold);
  if (stats.arrivals) out += arrival_section_text(*stats.arrivals, stats.arrival_ranks);
  out += format_resources(stats.resources);
  return out;
}

std::string format_resources(const std::vector<RankResources>& resources) {
  if (resources.empty()) return "";
  const bool gpu = std::any_of(resources.begin(), resources.end(),
                               [](const RankResources& r) { return r.gpu.has_value(); });
  const auto shown = [](const std::optional<double>& v, double scale) {
    return v ? plain_number(*v / scale) : std::string("-");
  };
  constexpr double kMiB = 1 << 20;
  std::string out = "resources (averages of each rank's resource records):\n";
  char line[256];
  std::snprintf(line, sizeof line, "%6s %-12s %7s %8s %10s", "rank", "host", "records", "cpu %",
                "rss MiB");
  out += line;
  if (gpu) {
    std::snprintf(line, sizeof line, " %5s %7s %10s %7s", "gpu", "gpu %", "gpu MiB", "gpu W");
    out += line;
  }
  out += "\n";
  for (const auto& r : resources) {
    std::snprintf(line, sizeof line, "%6d %-12s %7lld %8s %10s", r.rank, r.host.c_str(), r.records,
                  plain_number(r.cpu_percent).c_str(), plain_number(r.rss_bytes / kMiB).c_str());
    out += line;
    if (gpu) {
      std::snprintf(line, sizeof line, " %5s %7s %10s %7s",
                    r.gpu ? std::to_string(*r.gpu).c_str() : "-",
                    shown(r.gpu_util_percent, 1).c_str(), shown(r.gpu_memory_bytes, kMiB).c_str(),
                    shown(r.gpu_power_watts, 1).c_str());
      out += line;
    }
    out += "\n";
  }
  return out;
}

nlohmann::json stats_to_json(const RunStats& stats) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : stats.ranks) {
    nlohmann::json j = {{"rank", r.rank},
                        {"host", r.host},
                        {"steps", r.steps},
                        {"samples", r.samples},
                        {"seconds", r.seconds},
                        {"samples_per_second", r.samples_per_second},
                        {"p50_step_seconds", r.p50_step_seconds},
                        {"p95_step_seconds", r.p95_step_seconds}};
    j["comm_seconds"] = r.has_comm ? nlohmann::json(r.comm_seconds) : nlohmann::json(nullptr);
    j["comm_share"] = r.has_comm ? nlohmann::json(r.comm_share) : nlohmann::json(nullptr);
    j["data_seconds"] = r.has_data ? nlohmann::json(r.data_seconds) : nlohmann::json(nullptr);
    j["data_share"] = r.has_data ? nlohmann::json(r.data_share) : nlohmann::json(nullptr);
    ranks.push_back(std::move(j));
  }
  nlohmann::json stragglers = nlohmann::json::array();
  for (const auto& s : stats.stragglers) {
    nlohmann::json j = {{"kind", s.kind},
                        {"host", s.host},
                        {"ranks", s.ranks},
                        {"slower_by", s.slower_by},
                        {"excess_seconds_per_step", s.excess_seconds_per_step},
                        {"cause", s.cause},
                        {"cause_seconds_per_sample", s.cause_seconds_per_sample},
                        {"median_cause_seconds_per_sample", s.median_cause_seconds_per_sample},
                        {"slowest_steps", s.slowest_steps},
                        {"steps_compared", s.steps_compared}};
    if (s.kind == "rank") j["rank"] = s.rank;
    stragglers.push_back(std::move(j));
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : stats.nodes) {
    nodes.push_back({{"host", n.host},
                     {"ranks", n.ranks},
                     {"samples", n.samples},
                     {"slowest_rank_seconds", n.slowest_rank_seconds},
                     {"samples_per_second", n.samples_per_second}});
  }
  nlohmann::json resources = nlohmann::json::array();
  for (const auto& r : stats.resources) {
    const auto or_null = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
    resources.push_back({{"rank", r.rank},
                         {"host", r.host},
                         {"records", r.records},
                         {"cpu_percent", r.cpu_percent},
                         {"rss_bytes", r.rss_bytes},
                         {"gpu", or_null(r.gpu)},
                         {"gpu_util_percent", or_null(r.gpu_util_percent)},
                         {"gpu_memory_bytes", or_null(r.gpu_memory_bytes)},
                         {"gpu_power_watts", or_null(r.gpu_power_watts)}});
  }
  nlohmann::json arrivals = nullptr;
  if (stats.arrivals) {
    const ArrivalVerdict& a = *stats.arrivals;
    arrivals = {{"straggler", a.straggler},
                {"rank", a.rank},
                {"host", a.host},
                {"last", a.last},
                {"calls", a.calls},
                {"ranks_compared", stats.arrival_ranks},
                {"lag_seconds", a.lag_seconds},
                {"lag_share", a.lag_share},
                {"waited_seconds", a.waited_seconds},
                {"others_waited_seconds", a.others_waited_seconds}};
  }
  nlohmann::json out = {{"ranks", ranks},
                        {"nodes", nodes},
                        {"resources", resources},
                        {"total",
                         {{"samples", stats.total_samples},
                          {"slowest_rank_seconds", stats.slowest_rank_seconds},
                          {"samples_per_second", stats.total_samples_per_second}}},
                        {"failures", lost_time_to_json(stats.lost)},
                        {"straggler_threshold", stats.straggler_threshold},
                        {"straggler_min_excess_seconds", kStragglerMinExcessSeconds},
                        {"stragglers", stragglers},
                        {"notes", stats.notes}};
  // Only where the run has the loggers' waits: the goldens of older runs read as before.
  if (stats.arrivals) out["arrivals"] = std::move(arrivals);
  return out;
}

}  // namespace dtrain::report
