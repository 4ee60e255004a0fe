// Throughput from the per-rank metric records (rank-NNNNN.jsonl) that libdtrain's Meter writes.
// Pure: the command reads the files and hands the lines here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace dtrain::plan {

struct MetricRecord {
  int rank = 0;
  long long step = 0;
  long long samples = 0;
  double seconds = 0;
};

struct RankStats {
  int rank = 0;
  long long steps = 0;
  long long samples = 0;
  double seconds = 0;
  double samples_per_second = 0;
};

struct RunStats {
  std::vector<RankStats> ranks;  // by rank
  long long total_samples = 0;
  // The job moves at the pace of its slowest rank: total samples over the longest rank time.
  double slowest_rank_seconds = 0;
  double total_samples_per_second = 0;
};

class MetricFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses one JSON Lines record; `where` ("rank-00001.jsonl:12") prefixes any error.
MetricRecord parse_metric_record(std::string_view line, const std::string& where);

RunStats compute_stats(const std::vector<MetricRecord>& records);

std::string format_stats_table(const RunStats& stats);
nlohmann::json stats_to_json(const RunStats& stats);

}  // namespace dtrain::plan
