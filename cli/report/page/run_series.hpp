// `dtrain report`'s charts of one run over time (docs/report.md): the metric records binned on one
// time axis, so a page of 1,024 ranks stays small. Throughput per bin (the job's total, per node,
// and across ranks as min/median/max), the step time split into compute, collectives and data
// loading, a heat map of step time (rows of ranks by bins), the slowest collectives (from the
// heartbeats), and the resource samples (CPU, memory, GPU) as bands across ranks. Pure: the command
// hands the records in one at a time, as to StatsBuilder.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "records/metric_record.hpp"
#include "report/natural_order.hpp"
#include "report/page/series_input.hpp"

namespace dtrain::report {

// Bins of the time axis: enough for a smooth line on a page's width, few enough that 1,024 ranks'
// bands and heat map stay well under the page's 2 MiB. A short run of slow steps gets fewer: a bin
// is at least the typical time between steps.
inline constexpr int kTimeBins = 100;
// The heat map's rows: one rank each up to this many ranks, else consecutive ranks together.
inline constexpr int kHeatRows = 128;
// Up to this many ranks (nodes) each have a line of their own; more are drawn as a band.
inline constexpr std::size_t kOwnLines = 8;
inline constexpr std::size_t kNodeLines = 16;
// The slowest collectives listed.
inline constexpr std::size_t kSlowCollectives = 10;

// A value per bin across ranks; NaN where no rank had one.
struct Band {
  std::vector<double> min, median, max;
};

struct SlowCollective {
  int attempt = 0;
  long long seq = 0;
  std::string op;
  long long bytes = 0;
  double start = 0;    // Unix seconds: the first rank entered it
  double seconds = 0;  // from the first rank's enter to the last rank's exit
  // Between the first and the last rank entering it: time the others waited for `last_rank`.
  double wait_seconds = 0;
  int last_rank = 0;  // the rank that entered last
  int ranks = 0;      // ranks that entered it
};

struct ResourceBands {
  bool gpu = false;  // some record had GPU fields
  Band cpu_percent, rss_bytes, gpu_util_percent, gpu_memory_bytes, gpu_power_watts;
};

struct RunSeries {
  double start = 0;        // Unix seconds: the first step's start (or first resource sample)
  double bin_seconds = 0;  // width of a bin
  int bins = 0;            // 0: no step or resource record; at most kTimeBins
  std::vector<double> total_samples_per_second;   // all ranks' samples in the bin / bin_seconds
  Band rank_samples_per_second;                   // a rank's samples / its step seconds in the bin
  std::map<int, std::vector<double>> rank_lines;  // up to kOwnLines ranks
  // 2 to kNodeLines hosts, node2 before node10.
  std::map<std::string, std::vector<double>, NaturalLess> node_samples_per_second;
  // Shares of all ranks' step time in the bin (0 to 1); NaN where no step ended.
  std::vector<double> compute_share, comm_share, data_share;
  std::vector<std::string> heat_rows;            // "3" or "0-7"
  std::vector<std::vector<double>> heat;         // [row][bin]: the row's slowest mean step seconds
  std::vector<SlowCollective> slow_collectives;  // slowest first
  std::optional<ResourceBands> resources;        // none without resource records
};

class SeriesBuilder {
 public:
  void add(const records::MetricRecord& record);
  void set_host(int rank, std::string host);
  RunSeries finish() const;

 private:
  // Every rank's steps, merged past kKeptSeriesSteps (series::bound_steps: the bins
  // are known only once the run's whole time span is, and a bin then still holds several entries),
  // and every resource sample (one every few seconds). The types and the stages of finish() are
  // series_stages.hpp's.
  series::Steps steps_;
  series::Samples samples_;
  series::Collectives collectives_;
  std::map<int, std::string> hosts_;
};

}  // namespace dtrain::report
