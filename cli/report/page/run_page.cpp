#include "report/page/run_page.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "affinity/cpuset.hpp"
#include "records/log_line.hpp"
#include "records/rank_lines.hpp"
#include "report/alike_ends.hpp"
#include "report/page/job_facts.hpp"
#include "report/page/stuck_collective.hpp"
#include "report/plain_number.hpp"

namespace dtrain::report {
namespace {

using nlohmann::json;

// Chart values with 4 significant digits: a pixel is coarser, and 1,024 ranks' bands stay small.
// NaN (no value) becomes null.
json sig4(double v) {
  if (!std::isfinite(v)) return nullptr;
  if (v == 0) return 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return std::strtod(buf, nullptr);
}

json series_json(const std::vector<double>& values) {
  json out = json::array();
  for (double v : values) out.push_back(sig4(v));
  return out;
}

json band_json(const Band& b) {
  return {
      {"min", series_json(b.min)}, {"median", series_json(b.median)}, {"max", series_json(b.max)}};
}

std::string text_or_dash(const std::optional<double>& v, const std::string& unit = "") {
  return v ? plain_number(*v) + unit : "-";
}

std::string bytes_or_dash(const std::optional<double>& v) { return v ? bytes_text(*v) : "-"; }

// How each rank ended, as the first-error verdict has it: "culprit: was killed by signal 9".
std::map<int, std::string> rank_ends(const FirstErrorReport& r) {
  std::map<int, std::string> out;
  for (int rank : r.finished) out[rank] = "exited with status 0";
  for (int rank : r.running) out[rank] = "running";
  for (const auto& e : r.victims) out[e.rank] = "victim: " + e.how;
  for (const auto& e : r.stopped) out[e.rank] = "stopped: " + e.how;
  for (const auto& e : r.same_error) out[e.rank] = "culprit (same error): " + e.how;
  if (r.culprit) out[r.culprit->rank] = "culprit: " + r.culprit->how;
  return out;
}

json rank_end_json(const RankEnd& e) {
  json j = {{"rank", e.rank},
            {"host", e.host},
            {"how", e.how},
            {"time", records::format_log_time(e.time)}};
  if (e.evidence) j["line"] = e.evidence->text;
  return j;
}

// The last of a rank's lines that its program wrote (run-rank's exit line says only how it ended,
// which the page shows already), with its time.
std::string last_own_line(const std::vector<std::string>& lines) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const std::string_view line = *it;
    const bool stamped = records::parse_log_timestamp(line).has_value();
    if (stamped && records::parse_rank_exit(line.substr(records::kLogTimestampWidth + 1))) continue;
    return *it;
  }
  return "";
}

// A binding record's cells: the cores, CUDA_VISIBLE_DEVICES ("none" when set empty) and the NIC
// variables as NAME=value.
std::vector<std::string> binding_cells(const records::RankBinding& b) {
  std::string nics;
  for (const auto& [name, value] : b.nics) nics += (nics.empty() ? "" : ", ") + name + "=" + value;
  return {b.cpus.empty() ? "-" : b.cpus, b.gpus ? (b.gpus->empty() ? "none" : *b.gpus) : "-",
          nics.empty() ? "-" : nics};
}

// Every rank: where it ran, its throughput and step time, its resource use and how it ended; and
// which are stragglers.
json ranks_json(const RunPageInput& in) {
  std::set<int> ranks;
  for (const auto& [rank, p] : in.places) ranks.insert(rank);
  for (const auto& [rank, b] : in.bindings) ranks.insert(rank);
  std::map<int, const RankStats*> stats;
  if (in.stats) {
    for (const auto& r : in.stats->ranks) {
      ranks.insert(r.rank);
      stats[r.rank] = &r;
    }
  }
  const auto ends = rank_ends(in.first_error);
  const bool res = in.series.resources.has_value();
  const bool gpu = res && in.series.resources->gpu;
  // Where each rank ran, from its binding record; a run directory without any (written before
  // 2026-11-28, or without a Meter) has no such columns, and the page says so.
  const bool bound = !in.bindings.empty();
  json columns = {"rank", "host", "local"};
  if (bound) {
    for (const char* c : {"cores", "CUDA_VISIBLE_DEVICES", "NIC"}) columns.push_back(c);
  }
  for (const char* c : {"steps", "samples/s", "p50 step", "p95 step", "comm %", "data %"}) {
    columns.push_back(c);
  }
  if (res) {
    for (const char* c : {"CPU %", "RSS"}) columns.push_back(c);
  }
  if (gpu) {
    for (const char* c : {"GPU", "GPU %", "GPU mem", "GPU W"}) columns.push_back(c);
  }
  columns.push_back("end");
  json rows = json::array();
  for (int rank : ranks) {
    json row = {rank};
    const auto place = in.places.find(rank);
    const auto& start = place == in.places.end() ? std::nullopt : place->second.start;
    const auto binding = in.bindings.find(rank);
    if (start) {
      row.push_back(start->host);
    } else {
      row.push_back(binding != in.bindings.end() ? binding->second.binding.host : "?");
    }
    row.push_back(start ? std::to_string(start->local_rank) : "-");
    if (bound) {
      const std::vector<std::string> cells = binding != in.bindings.end()
                                                 ? binding_cells(binding->second.binding)
                                                 : std::vector<std::string>(3, "-");
      for (const auto& c : cells) row.push_back(c);
    }
    const auto s = stats.find(rank);
    if (s != stats.end()) {
      const RankStats& r = *s->second;
      row.push_back(std::to_string(r.steps));
      row.push_back(plain_number(r.samples_per_second));
      row.push_back(duration_text(r.p50_step_seconds));
      row.push_back(duration_text(r.p95_step_seconds));
      row.push_back(r.has_comm ? percent_text(r.comm_share) : "-");
      row.push_back(r.has_data ? percent_text(r.data_share) : "-");
    } else {
      for (int i = 0; i < 6; ++i) row.push_back("-");
    }
    // The rank's averages as `dtrain stats` computes them (RunStats::resources).
    const RankResources* u = nullptr;
    if (in.stats) {
      for (const RankResources& r : in.stats->resources) {
        if (r.rank == rank && r.records > 0) u = &r;
      }
    }
    if (res) {
      row.push_back(u ? text_or_dash(std::optional<double>(u->cpu_percent)) : "-");
      row.push_back(u ? bytes_or_dash(std::optional<double>(u->rss_bytes)) : "-");
    }
    if (gpu) {
      row.push_back(u && u->gpu ? std::to_string(*u->gpu) : "-");
      row.push_back(u ? text_or_dash(u->gpu_util_percent) : "-");
      row.push_back(u ? bytes_or_dash(u->gpu_memory_bytes) : "-");
      row.push_back(u ? text_or_dash(u->gpu_power_watts) : "-");
    }
    const auto end = ends.find(rank);
    row.push_back(end == ends.end() ? "-" : end->second);
    rows.push_back(std::move(row));
  }
  // The stragglers' ranks (a node's: all of them), shown above the pages of a long table with the
  // culprits (report.js).
  std::set<int> slow;
  if (in.stats) {
    for (const auto& s : in.stats->stragglers) slow.insert(s.ranks.begin(), s.ranks.end());
  }
  return {{"columns", columns}, {"rows", rows}, {"bindings", bound}, {"slow", slow}};
}

// Mean seconds per step of compute, collectives and data loading: a bar per rank, or per group of
// consecutive ranks (their mean) when there are more than fit.
json split_json(const RunStats& stats) {
  constexpr std::size_t kBars = 64;
  json bars = json::array();
  const auto& ranks = stats.ranks;
  const std::size_t per_bar = std::max<std::size_t>(1, (ranks.size() + kBars - 1) / kBars);
  for (std::size_t first = 0; first < ranks.size(); first += per_bar) {
    const std::size_t last = std::min(ranks.size(), first + per_bar) - 1;
    double seconds = 0, comm = 0, data = 0;
    long long steps = 0;
    for (std::size_t k = first; k <= last; ++k) {
      seconds += ranks[k].seconds;
      comm += ranks[k].comm_seconds;
      data += ranks[k].data_seconds;
      steps += ranks[k].steps;
    }
    if (steps == 0) continue;
    const double n = static_cast<double>(steps);
    const std::string label =
        first == last ? std::to_string(ranks[first].rank)
                      : std::to_string(ranks[first].rank) + "-" + std::to_string(ranks[last].rank);
    bars.push_back({{"label", label},
                    {"compute", sig4(std::max(0.0, seconds - comm - data) / n)},
                    {"comm", sig4(comm / n)},
                    {"data", sig4(data / n)}});
  }
  return bars;
}

json stragglers_json(const RunStats& stats) {
  json out = json::array();
  for (const auto& s : stats.stragglers) {
    const std::string who =
        s.kind == "rank" ? "rank " + std::to_string(s.rank) + " on " + s.host
                         : "node " + s.host + " (ranks " + affinity::format_ranges(s.ranks) + ")";
    out.push_back({{"who", who},
                   {"slower", plain_number(s.slower_by * 100) + " %"},
                   {"cause", s.cause},
                   {"per_step", duration_text(s.excess_seconds_per_step)},
                   {"cause_per_sample", duration_text(s.cause_seconds_per_sample)},
                   {"median_per_sample", duration_text(s.median_cause_seconds_per_sample)},
                   {"certainty", certainty_text(s)}});
  }
  return out;
}

// The five ranks with the longest mean step, named whether or not they pass the threshold.
json slowest_ranks_json(const RunStats& stats) {
  std::vector<const RankStats*> by_step;
  for (const auto& r : stats.ranks) {
    if (r.steps > 0) by_step.push_back(&r);
  }
  const auto mean = [](const RankStats* r) { return r->seconds / static_cast<double>(r->steps); };
  std::stable_sort(by_step.begin(), by_step.end(),
                   [&](const RankStats* a, const RankStats* b) { return mean(a) > mean(b); });
  json out = json::array();
  for (std::size_t i = 0; i < std::min<std::size_t>(5, by_step.size()); ++i) {
    out.push_back({{"rank", by_step[i]->rank},
                   {"host", by_step[i]->host},
                   {"mean_step", duration_text(mean(by_step[i]))},
                   {"p95_step", duration_text(by_step[i]->p95_step_seconds)}});
  }
  return out;
}

json series_model(const RunSeries& s) {
  if (s.bins == 0) return nullptr;
  json lines = json::object();
  for (const auto& [rank, v] : s.rank_lines) lines[std::to_string(rank)] = series_json(v);
  // [host, values] pairs, not an object: a JSON object's keys come out sorted by bytes (node10
  // before node2), and the page draws the lines in this order.
  json nodes = json::array();
  for (const auto& [host, v] : s.node_samples_per_second)
    nodes.push_back(json::array({host, series_json(v)}));
  json heat = json::array();
  for (const auto& row : s.heat) heat.push_back(series_json(row));
  json out = {{"start", s.start},
              {"start_text", records::format_log_time(records::unix_seconds_to_micros(s.start))},
              {"bin_seconds", s.bin_seconds},
              {"bins", s.bins},
              {"total", series_json(s.total_samples_per_second)},
              {"band", band_json(s.rank_samples_per_second)},
              {"lines", lines},
              {"nodes", nodes},
              {"split",
               {{"compute", series_json(s.compute_share)},
                {"comm", series_json(s.comm_share)},
                {"data", series_json(s.data_share)}}},
              {"heat", {{"rows", s.heat_rows}, {"values", heat}}}};
  if (s.resources) {
    const ResourceBands& r = *s.resources;
    json res = {{"gpu", r.gpu},
                {"cpu_percent", band_json(r.cpu_percent)},
                {"rss_bytes", band_json(r.rss_bytes)}};
    if (r.gpu) {
      res["gpu_util_percent"] = band_json(r.gpu_util_percent);
      res["gpu_memory_bytes"] = band_json(r.gpu_memory_bytes);
      res["gpu_power_watts"] = band_json(r.gpu_power_watts);
    }
    out["resources"] = std::move(res);
  } else {
    out["resources"] = nullptr;
  }
  return out;
}

json collectives_json(const RunSeries& s) {
  json out = json::array();
  for (const auto& c : s.slow_collectives) {
    out.push_back(
        {{"collective", "#" + std::to_string(c.seq) + " " + c.op + " of " +
                            bytes_text(static_cast<double>(c.bytes)) +
                            (c.attempt > 0 ? " (attempt " + std::to_string(c.attempt) + ")" : "")},
         {"at", records::format_log_time(records::unix_seconds_to_micros(c.start))},
         {"seconds", duration_text(c.seconds)},
         {"waited", duration_text(c.wait_seconds)},
         {"last_rank", c.last_rank},
         {"ranks", c.ranks}});
  }
  return out;
}

json checkpoints_json(const RunPageInput& in) {
  json out = json::array();
  std::optional<std::int64_t> previous;
  for (const auto& c : in.checkpoints) {
    const auto t = records::parse_log_timestamp(c.record.time + " ");
    const auto bytes = c.record.bytes ? c.record.bytes : c.bytes_on_disk;
    json j = {{"time", c.record.time},
              {"step", c.record.step},
              {"path", c.record.path},
              {"world", c.record.world},
              {"took", c.record.seconds ? duration_text(*c.record.seconds) : "not recorded"},
              {"size", bytes ? bytes_text(static_cast<double>(*bytes)) : "not on disk"}};
    j["since_previous"] =
        t && previous ? duration_text(static_cast<double>(*t - *previous) / 1e6) : "-";
    if (t) {
      j["t"] = static_cast<double>(*t) / 1e6;
      previous = t;
    }
    out.push_back(std::move(j));
  }
  return out;
}

// The attempt still running, for the timeline: from the end of the last recorded attempt (or the
// first log line) to the page's writing (or the last log line).
json current_attempt_json(const RunPageInput& in) {
  std::optional<std::int64_t> first, last;
  for (const auto& [rank, p] : in.places) {
    if (p.first_line) first = std::min(first.value_or(*p.first_line), *p.first_line);
    if (p.last_line) last = std::max(last.value_or(*p.last_line), *p.last_line);
  }
  json j = {{"attempt", in.attempts.empty() ? 0 : in.attempts.back().attempt + 1}};
  if (!in.attempts.empty()) {
    if (const auto e = records::parse_log_timestamp(in.attempts.back().end + " ")) first = e;
  }
  if (in.now) last = std::max(last.value_or(*in.now), *in.now);
  if (first && last) {
    j["t0"] = static_cast<double>(*first) / 1e6;
    j["t1"] = static_cast<double>(std::max(*first, *last)) / 1e6;
  }
  return j;
}

json failures_json(const RunPageInput& in) {
  const FirstErrorReport& fe = in.first_error;
  json attempts = json::array();
  for (const auto& a : in.attempts) {
    json j = {{"attempt", a.attempt}, {"start", a.start}, {"end", a.end},     {"status", a.status},
              {"outcome", a.outcome}, {"cause", a.cause}, {"ranks", a.ranks}, {"nodes", a.nodes}};
    const auto s = records::parse_log_timestamp(a.start + " ");
    const auto e = records::parse_log_timestamp(a.end + " ");
    if (s && e) {
      j["t0"] = static_cast<double>(*s) / 1e6;
      j["t1"] = static_cast<double>(*e) / 1e6;
    }
    attempts.push_back(std::move(j));
  }
  json lost = json::array();
  if (in.stats) {
    for (const auto& f : in.stats->lost.failed) {
      lost.push_back({{"attempt", f.attempt},
                      {"crash", records::format_log_time(f.crash)},
                      {"checkpoint_step", f.checkpoint_step ? json(*f.checkpoint_step) : json("-")},
                      {"redone", duration_text(f.redone_seconds)},
                      {"restart", duration_text(f.restart_seconds)},
                      {"lost", duration_text(f.lost_seconds())}});
    }
  }
  json culprit = nullptr;
  if (fe.culprit) {
    culprit = rank_end_json(*fe.culprit);
    culprit["reason"] = fe.culprit_reason;
    culprit["last_line"] = last_own_line(fe.culprit->last_lines);
    culprit["t"] = static_cast<double>(fe.culprit->time) / 1e6;
  }
  // A thousand victims would fill the page: the first twenty, and how many there were.
  constexpr std::size_t kListed = 20;
  // Victims that ended alike are one row, their ranks collapsed (alike_ends.hpp).
  json victims = json::array();
  std::size_t victims_listed = 0;
  for (const auto& group : group_alike(fe.victims)) {
    if (victims.size() == kListed) break;
    json row = rank_end_json(*group.front());
    if (group.size() > 1) {
      row["rank"] = alike_ranks(group);
      row["host"] = alike_hosts(group);
    }
    victims.push_back(std::move(row));
    victims_listed += group.size();
  }
  json stopped = json::array();
  for (std::size_t i = 0; i < std::min(kListed, fe.stopped.size()); ++i) {
    stopped.push_back(rank_end_json(fe.stopped[i]));
  }
  json same = json::array();
  for (std::size_t i = 0; i < std::min(kListed, fe.same_error.size()); ++i) {
    same.push_back(rank_end_json(fe.same_error[i]));
  }
  json out = {{"summary", summarize_first_error(fe)},
              {"culprit", culprit},
              {"same_error", same},
              {"same_error_count", fe.same_error.size()},
              {"victims", victims},
              {"victim_count", fe.victims.size()},
              {"victims_listed", victims_listed},
              {"stopped", stopped},
              {"stopped_count", fe.stopped.size()},
              {"walltime_reached", fe.walltime_reached},
              {"attempts", attempts},
              {"lost", lost}};
  if (job_state(in) == "running") out["current"] = current_attempt_json(in);
  return out;
}

}  // namespace

void keep_binding(std::map<int, BindingSeen>& bindings, const records::MetricRecord& r) {
  if (r.type != records::RecordType::kBinding) return;
  const auto it = bindings.find(r.rank);
  if (it != bindings.end() && it->second.attempt > r.attempt) return;
  bindings[r.rank] = {r.attempt, r.binding};
}

json run_page_json(const RunPageInput& in) {
  json out = {{"label", in.summary.label},
              {"run_dir", in.run_dir},
              {"job", job_json(in)},
              {"ranks", ranks_json(in)},
              {"series", series_model(in.series)},
              {"collectives", collectives_json(in.series)},
              {"checkpoints", checkpoints_json(in)},
              {"failures", failures_json(in)}};
  if (in.stats) {
    const RunStats& s = *in.stats;
    out["throughput"] = {{"samples", s.total_samples},
                         {"samples_per_second", plain_number(s.total_samples_per_second)},
                         {"slowest_rank_seconds", duration_text(s.slowest_rank_seconds)},
                         {"nodes", json::array()}};
    for (const auto& n : s.nodes) {
      out["throughput"]["nodes"].push_back(
          {{"host", n.host},
           {"ranks", affinity::format_ranges(n.ranks)},
           {"samples_per_second", plain_number(n.samples_per_second)}});
    }
    out["split"] = split_json(s);
    out["stragglers"] = stragglers_json(s);
    out["straggler_threshold"] = plain_number(s.straggler_threshold * 100) + " %";
    out["straggler_min_excess"] = duration_text(kStragglerMinExcessSeconds);
    out["slowest_ranks"] = slowest_ranks_json(s);
    out["notes"] = s.notes;
  } else {
    out["throughput"] = nullptr;
  }
  // The collective a running job's ranks are in now leads the collectives (stuck_collective.hpp).
  if (in.hang && job_state(in) == "running") {
    auto progress = in_progress_json(*in.hang, in.now);
    if (!progress.is_null()) out["in_progress"] = std::move(progress);
  }
  if (!in.arrivals.empty()) out["arrivals"] = in.arrivals;  // older pages' goldens unchanged
  if (!in.stacks.empty()) {
    // The merged tree as `logs --hang` prints it: ranks on each branch, the odd rank apart.
    std::vector<int> ranks;
    for (const auto& s : in.stacks) ranks.push_back(s.rank);
    out["stacks"] = {{"taken", records::format_log_time(in.stacks.front().taken_at_us)},
                     {"ranks", affinity::format_ranges(ranks)},
                     {"tree", format_stack_tree(in.stacks)}};
  }
  return out;
}

}  // namespace dtrain::report
