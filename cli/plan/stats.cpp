#include "plan/stats.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

namespace dtrain::plan {
namespace {

constexpr int kMetricSchemaVersion = 1;

template <typename T>
T field(const nlohmann::json& record, const char* name, const std::string& where) {
  auto it = record.find(name);
  if (it == record.end()) {
    throw MetricFormatError("dtrain: stats: " + where + ": missing field \"" + name + "\"");
  }
  if (!it->is_number()) {
    throw MetricFormatError("dtrain: stats: " + where + ": field \"" + name +
                            "\": expected a number, got " + it->dump());
  }
  return it->get<T>();
}

std::string rate(double samples_per_second) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", samples_per_second);
  return buf;
}

}  // namespace

MetricRecord parse_metric_record(std::string_view line, const std::string& where) {
  nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (record.is_discarded() || !record.is_object()) {
    throw MetricFormatError("dtrain: stats: " + where + ": expected one JSON object per line");
  }
  const int version = field<int>(record, "v", where);
  if (version != kMetricSchemaVersion) {
    throw MetricFormatError("dtrain: stats: " + where + ": schema version " +
                            std::to_string(version) + " is not supported; expected " +
                            std::to_string(kMetricSchemaVersion));
  }
  MetricRecord out;
  out.rank = field<int>(record, "rank", where);
  out.step = field<long long>(record, "step", where);
  out.samples = field<long long>(record, "samples", where);
  out.seconds = field<double>(record, "seconds", where);
  if (out.rank < 0 || out.samples < 0 || out.seconds < 0) {
    throw MetricFormatError("dtrain: stats: " + where +
                            ": expected rank, samples and seconds >= 0");
  }
  return out;
}

RunStats compute_stats(const std::vector<MetricRecord>& records) {
  std::map<int, RankStats> by_rank;
  for (const auto& r : records) {
    RankStats& s = by_rank[r.rank];
    s.rank = r.rank;
    s.steps += 1;
    s.samples += r.samples;
    s.seconds += r.seconds;
  }
  RunStats out;
  for (auto& [rank, s] : by_rank) {
    s.samples_per_second = s.seconds > 0 ? static_cast<double>(s.samples) / s.seconds : 0;
    out.total_samples += s.samples;
    out.slowest_rank_seconds = std::max(out.slowest_rank_seconds, s.seconds);
    out.ranks.push_back(s);
  }
  if (out.slowest_rank_seconds > 0) {
    out.total_samples_per_second =
        static_cast<double>(out.total_samples) / out.slowest_rank_seconds;
  }
  return out;
}

std::string format_stats_table(const RunStats& stats) {
  std::string out;
  char line[160];
  std::snprintf(line, sizeof line, "%6s %8s %14s %10s %12s\n", "rank", "steps", "samples",
                "seconds", "samples/s");
  out += line;
  for (const auto& r : stats.ranks) {
    std::snprintf(line, sizeof line, "%6d %8lld %14lld %10.3f %12s\n", r.rank, r.steps, r.samples,
                  r.seconds, rate(r.samples_per_second).c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "%6s %8s %14lld %10.3f %12s\n", "total", "", stats.total_samples,
                stats.slowest_rank_seconds, rate(stats.total_samples_per_second).c_str());
  out += line;
  return out;
}

nlohmann::json stats_to_json(const RunStats& stats) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : stats.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"steps", r.steps},
                     {"samples", r.samples},
                     {"seconds", r.seconds},
                     {"samples_per_second", r.samples_per_second}});
  }
  return {{"ranks", ranks},
          {"total",
           {{"samples", stats.total_samples},
            {"slowest_rank_seconds", stats.slowest_rank_seconds},
            {"samples_per_second", stats.total_samples_per_second}}}};
}

}  // namespace dtrain::plan
