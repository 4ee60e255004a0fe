#include "report/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "affinity/cpuset.hpp"
#include "records/log_line.hpp"
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

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Seconds per sample of a rank or node, split by where the time went.
struct PerSample {
  double step = 0;     // all of it
  double comm = 0;     // waiting in collectives
  double data = 0;     // loading data
  double compute = 0;  // the rest
  double busy() const { return step - comm; }
};

PerSample per_sample(const std::vector<const RankStats*>& ranks) {
  PerSample p;
  long long samples = 0;
  for (const RankStats* r : ranks) {
    add_saturating(samples, r->samples);
    p.step += r->seconds;
    p.comm += r->comm_seconds;
    p.data += r->data_seconds;
  }
  if (samples == 0) return p;
  p.step /= static_cast<double>(samples);
  p.comm /= static_cast<double>(samples);
  p.data /= static_cast<double>(samples);
  p.compute = std::max(0.0, p.step - p.comm - p.data);
  return p;
}

// Compares each group's time per sample with the median over groups. In a synchronous job every
// rank's step takes as long as the slowest one's, so the straggler shows as more busy time
// (compute or data) while the others show as more waiting; both are checked.
std::vector<Straggler> find_stragglers(const std::vector<std::vector<const RankStats*>>& groups,
                                       const std::string& kind, double threshold) {
  std::vector<PerSample> ps;
  for (const auto& g : groups) ps.push_back(per_sample(g));
  std::vector<double> step, busy, comm, data, compute;
  for (const auto& p : ps) {
    step.push_back(p.step);
    busy.push_back(p.busy());
    comm.push_back(p.comm);
    data.push_back(p.data);
    compute.push_back(p.compute);
  }
  const PerSample m{median(step), median(comm), median(data), median(compute)};
  const double m_busy = median(busy);
  std::vector<Straggler> out;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const PerSample& p = ps[i];
    const double by_busy = m_busy > 0 ? p.busy() / m_busy - 1 : 0;
    const double by_step = m.step > 0 ? p.step / m.step - 1 : 0;
    if (by_busy <= threshold && by_step <= threshold) continue;
    Straggler s;
    s.kind = kind;
    s.slower_by = std::max(by_busy, by_step);
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
    for (const RankStats* r : groups[i]) s.ranks.push_back(r->rank);
    s.host = groups[i].front()->host;
    if (kind == "rank") s.rank = groups[i].front()->rank;
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const Straggler& a, const Straggler& b) {
    return a.slower_by > b.slower_by;
  });
  return out;
}

// Where a note says what comm % leaves out. The Meter times only the collectives of the Context's
// communicator; DDP's allreduce (torch.distributed), Horovod's or a direct NCCL call never pass
// through it, so their time is in the step but counted as compute (a DDP job showed 0.8 % where
// 38.4 % of its steps went to the allreduce).
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
      "comm % is the time inside dtrain's own collectives during the timed steps; another "
      "library's collectives (torch.distributed and DDP, Horovod, NCCL called directly) are not "
      "seen and count as compute, here and in the stragglers' causes");
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
  if (r.type != records::RecordType::kStep) return;
  Acc& acc = ranks_[r.rank];
  acc.rank = r.rank;
  if (r.attempt > acc.attempt) {
    if (!acc.steps.empty() && r.step <= acc.steps.front().step) renumbered_[r.attempt] = r.step;
    // Resumed from a checkpoint: what the earlier attempt did from this step on was lost.
    while (!acc.steps.empty() && acc.steps.back().step >= r.step) {
      acc.steps.pop_back();
      ++redone_;
    }
    acc.attempt = r.attempt;
  }
  acc.steps.push_back({r.step, r.samples, r.seconds, r.comm_seconds, r.data_seconds});
  if (r.time > 0) {
    const std::int64_t began = records::unix_seconds_to_micros(r.time - r.seconds);
    auto [it, inserted] = first_step_start_.emplace(r.attempt, began);
    if (!inserted) it->second = std::min(it->second, began);
  }
}

void StatsBuilder::set_host(int rank, std::string host) { hosts_[rank] = std::move(host); }

RunStats StatsBuilder::finish(double straggler_threshold) const {
  RunStats out;
  out.straggler_threshold = straggler_threshold;
  out.first_step_start = first_step_start_;
  out.lost.redone_step_records = redone_;
  for (const auto& [rank, acc] : ranks_) {
    RankStats s;
    s.rank = rank;
    std::vector<double> step_seconds;
    for (const Kept& k : acc.steps) {
      s.steps += 1;
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
      step_seconds.push_back(k.seconds);
    }
    if (auto it = hosts_.find(rank); it != hosts_.end()) s.host = it->second;
    if (s.seconds > 0) {
      s.samples_per_second = static_cast<double>(s.samples) / s.seconds;
      s.comm_share = s.comm_seconds / s.seconds;
      s.data_share = s.data_seconds / s.seconds;
    }
    s.p50_step_seconds = percentile(step_seconds, 50);
    s.p95_step_seconds = percentile(step_seconds, 95);
    add_saturating(out.total_samples, s.samples);
    out.slowest_rank_seconds = std::max(out.slowest_rank_seconds, s.seconds);
    out.ranks.push_back(std::move(s));
  }
  if (out.slowest_rank_seconds > 0) {
    out.total_samples_per_second =
        static_cast<double>(out.total_samples) / out.slowest_rank_seconds;
  }
  std::vector<std::vector<const RankStats*>> rank_groups;
  std::map<std::string, std::vector<const RankStats*>> by_host;
  for (const auto& r : out.ranks) {
    if (r.samples == 0) continue;
    rank_groups.push_back({&r});
    by_host[r.host].push_back(&r);
  }
  if (rank_groups.size() >= 2) {
    out.stragglers = find_stragglers(rank_groups, "rank", straggler_threshold);
  }
  if (by_host.size() >= 2 && by_host.count("?") == 0) {
    std::vector<std::vector<const RankStats*>> node_groups;
    for (auto& [host, ranks] : by_host) {
      node_groups.push_back(ranks);
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
    for (auto& s : find_stragglers(node_groups, "node", straggler_threshold)) {
      out.stragglers.push_back(std::move(s));
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
  if (!stats.stragglers.empty()) {
    out += "stragglers (more than " + plain_number(stats.straggler_threshold * 100) +
           " % slower per sample than the median):\n";
    for (const auto& s : stats.stragglers) {
      std::string who = s.kind == "rank"
                            ? "rank " + std::to_string(s.rank) + " on " + s.host
                            : "node " + s.host + " (" + std::to_string(s.ranks.size()) + " ranks)";
      std::snprintf(line, sizeof line,
                    "  %s: %.0f %% slower; cause: %s (%s per sample, median %s)\n", who.c_str(),
                    s.slower_by * 100, s.cause.c_str(),
                    duration_text(s.cause_seconds_per_sample).c_str(),
                    duration_text(s.median_cause_seconds_per_sample).c_str());
      out += line;
    }
  }
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
                        {"cause", s.cause},
                        {"cause_seconds_per_sample", s.cause_seconds_per_sample},
                        {"median_cause_seconds_per_sample", s.median_cause_seconds_per_sample}};
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
  return {{"ranks", ranks},
          {"nodes", nodes},
          {"resources", resources},
          {"total",
           {{"samples", stats.total_samples},
            {"slowest_rank_seconds", stats.slowest_rank_seconds},
            {"samples_per_second", stats.total_samples_per_second}}},
          {"failures", lost_time_to_json(stats.lost)},
          {"straggler_threshold", stats.straggler_threshold},
          {"stragglers", stragglers},
          {"notes", stats.notes}};
}

}  // namespace dtrain::report
