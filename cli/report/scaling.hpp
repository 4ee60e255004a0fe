// Runs of one job at different scales, side by side: the table users otherwise build by hand
// (ranks, samples/s, speedup and efficiency against the smallest run) and its plot as SVG, a text
// format any viewer, editor or CI artifact page shows without a browser. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/errors.hpp"
#include "report/stats.hpp"

namespace dtrain::report {

struct ScalingRun {
  std::string label;  // the run directory's name
  std::string job;    // job name from plan.json, "" when unknown
  int ranks = 0;
  std::optional<int> gpus;  // ranks x job.yaml's gpus_per_rank, when it says
  double samples_per_second = 0;
};

struct ScalingRow {
  ScalingRun run;
  double speedup = 0;     // samples/s over the baseline's
  double efficiency = 0;  // speedup / (ranks / baseline ranks)
};

struct ScalingTable {
  std::vector<ScalingRow> rows;  // by ranks, then input order
  std::size_t baseline = 0;      // index of the smallest run in rows
  bool mixed_jobs = false;       // the runs name different jobs
};

// Throws UsageError when a run has no ranks or no throughput (it cannot be compared).
ScalingTable scaling_table(std::vector<ScalingRun> runs);

std::string format_scaling_table(const ScalingTable& table);
nlohmann::json scaling_to_json(const ScalingTable& table);

// `dtrain stats --json`, indented by 2: of one run (no `table`), its stats_to_json with
// "run_dir"; of several, {"runs": [each so], "scaling": scaling_to_json(*table)}. `run_dirs` and
// `stats` in the same order.
std::string stats_json_text(const std::vector<std::string>& run_dirs,
                            const std::vector<RunStats>& stats, const ScalingTable* table);

// Samples/s against ranks, measured and ideal (linear from the baseline), with efficiency labels.
std::string scaling_svg(const ScalingTable& table);
// One run: per-rank samples/s as bars, the median as a line, stragglers in another colour.
std::string ranks_svg(const RunStats& stats, const std::string& title);

}  // namespace dtrain::report
