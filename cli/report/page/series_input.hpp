// What SeriesBuilder (run_series.hpp) keeps of the metric records for the stages of its finish()
// (series_stages.hpp): each rank's steps and resource samples, and the collectives across ranks.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dtrain::report::series {

// A step record, or an interval record's steps together: they ran over `span` seconds before
// `time` (their seconds and the pauses between), spread evenly over it.
struct Step {
  double time = 0;  // the record's: the step's end
  double seconds = 0;
  double comm = 0;
  double data = 0;
  long long samples = 0;
  double span = 0;  // 0: a step record, `seconds` long
  long long steps = 1;
};
using Steps = std::map<int, std::vector<Step>>;

// A resource record's readings; the GPU ones absent without NVML (records::GpuSample).
struct Sample {
  double time = 0;
  double interval = 0;
  std::optional<double> cpu_percent;
  std::optional<long long> rss_bytes;
  std::optional<int> gpu;
  std::optional<double> gpu_util_percent;
  std::optional<long long> gpu_memory_bytes;
  std::optional<double> gpu_power_watts;
};
using Samples = std::map<int, std::vector<Sample>>;

// A collective across ranks, from its enter and exit heartbeats.
struct Collective {
  std::string op;
  long long bytes = 0;
  double first_enter = 0, last_enter = 0, last_exit = 0;
  int last_rank = 0;
  int ranks = 0;
};
// (attempt, seq) -> the collective: every attempt numbers them from 0 again.
using Collectives = std::map<std::pair<int, long long>, Collective>;

}  // namespace dtrain::report::series
