#include "report/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "affinity/cpuset.hpp"
#include "records/log_line.hpp"
#include "report/plain_number.hpp"
#include "report/stats_stages.hpp"

namespace dtrain::report {
namespace {

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
    const auto& kept = acc.steps.entries();
    if (!kept.empty() && first_step <= kept.front().step) renumbered_[r.attempt] = first_step;
    // Resumed from a checkpoint: what the earlier attempt did from this step on was lost.
    redone_ += acc.steps.drop_from(first_step);
    acc.attempt = r.attempt;
  }
  if (interval) {
    const records::StepInterval& i = r.step_interval;
    KeptSteps k{first_step,
                static_cast<long long>(i.samples.sum()),
                i.seconds.sum(),
                i.comm_seconds.sum(),
                std::nullopt,
                i.count(),
                std::make_shared<const records::LogHistogram>(i.seconds)};
    if (i.data_seconds.count() > 0) k.data_seconds = i.data_seconds.sum();
    acc.steps.push(std::move(k));
  } else {
    acc.steps.push({r.step, r.samples, r.seconds, r.comm_seconds, r.data_seconds, 1, nullptr});
  }
  if (r.time > 0) {
    const std::int64_t began =
        records::unix_seconds_to_micros(interval ? r.step_interval.began : r.time - r.seconds);
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
  std::map<int, std::vector<double>> busy;
  for (const auto& [rank, acc] : ranks_) {
    RankStats s = rank_stats(rank, acc.steps.entries());
    if (auto it = hosts_.find(rank); it != hosts_.end()) s.host = it->second;
    out.ranks.push_back(std::move(s));
    busy[rank] = last_busy_seconds(acc.steps.entries());
  }
  add_run_totals(out);
  add_stragglers_and_nodes(out, busy, straggler_threshold);
  for (const auto& [rank, sums] : resources_) {
    RankResources r = average_resources(rank, sums);
    if (auto it = hosts_.find(rank); it != hosts_.end()) r.host = it->second;
    out.resources.push_back(std::move(r));
  }
  add_comm_notes(out);
  for (const auto& [attempt, first] : renumbered_) {
    out.notes.push_back(renumbered_note(attempt, first));
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
