// The page model of `dtrain report` (docs/report.md): what one run directory says, gathered from
// the readers every other command uses (StatsBuilder's throughput and stragglers, the first-error
// verdict, the time lost to failures, the attempts and checkpoints, SeriesBuilder's binned charts),
// as the JSON that the page's script draws (the page across runs: report_page.hpp). Numbers a
// person reads in a table are formatted here, with plain_number, as in the terminal tables. Pure:
// the command reads the files.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "records/attempt_record.hpp"
#include "records/metric_record.hpp"
#include "records/rank_lines.hpp"
#include "report/first_error.hpp"
#include "report/hang.hpp"
#include "report/page/run_series.hpp"
#include "report/run_summary.hpp"
#include "report/scaling.hpp"
#include "report/stack_tree.hpp"
#include "report/stats.hpp"

namespace dtrain::report {

// Where and when a rank ran, from its log (the attempt that ended the job).
struct RankPlace {
  std::optional<records::RankStart> start;
  std::optional<std::int64_t> first_line;  // microseconds since the epoch
  std::optional<std::int64_t> last_line;
};

// A rank's binding record (records/metric_record.hpp), of the latest attempt its metric file has.
struct BindingSeen {
  int attempt = 0;
  records::RankBinding binding;
};

// Keeps `r` in `bindings` when it is a binding record of its rank's latest attempt so far; a later
// one of the same attempt (a second Meter) replaces an earlier one. Other records are ignored.
void keep_binding(std::map<int, BindingSeen>& bindings, const records::MetricRecord& r);

struct CheckpointInfo {
  records::CheckpointRecord record;
  // The checkpoint file's size when it is still there, for a record without "bytes" (older ones).
  std::optional<long long> bytes_on_disk;
};

struct RunPageInput {
  std::string run_dir;  // as given
  // Its label and what plan.json says (empty or 0 when the run directory has none).
  RunSummary summary;
  std::map<int, RankPlace> places;      // every rank with a log
  std::map<int, BindingSeen> bindings;  // every rank whose metric file has a binding record
  std::vector<records::AttemptRecord> attempts;
  std::vector<CheckpointInfo> checkpoints;
  std::optional<records::JobEndRecord> job_end;
  std::optional<RunStats> stats;  // none without metric files
  // The straggler by arrival at the collectives (arrival_section_text), Meter or not; "" when the
  // loggers published no waits.
  std::string arrivals;
  RunSeries series;
  FirstErrorReport first_error;
  // When the page is written (microseconds since the epoch): how long a running job has run and
  // its ranks have waited. nullopt: up to its last log line (and no wait is timed).
  std::optional<std::int64_t> now;
  // The heartbeats' verdict (detect_hang) of a job that still runs: the collective its ranks are in
  // now leads the page's collectives (stuck_collective.hpp). nullopt when not read.
  std::optional<HangReport> hang;
  // The stacks the hang watch took (RUN_DIR/stacks) of the attempt that ended the job: the page
  // shows them merged (format_stack_tree, as `logs --hang`). Empty when it took none.
  std::vector<RankStacks> stacks;
};

// The model of one run's section (docs/report.md lists its fields).
nlohmann::json run_page_json(const RunPageInput& in);

}  // namespace dtrain::report
