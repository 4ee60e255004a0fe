#include "run_dir_page.hpp"

#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "records/log_line.hpp"
#include "records/rank_files.hpp"
#include "report/attempts.hpp"
#include "report/hang.hpp"
#include "report/page/job_facts.hpp"
#include "report/page/run_series.hpp"
#include "run_dir.hpp"
#include "stack_capture.hpp"

namespace dtrain::cli {

namespace fs = std::filesystem;

RunPageRead read_run_page_input(const std::string& run_dir, double straggler_threshold,
                                std::int64_t now_us) {
  require_run_dir(run_dir);
  RunPageRead out;
  report::RunPageInput& in = out.page;
  in.run_dir = run_dir;
  const RunSummary summary = read_run_summary(run_dir);
  in.summary = summary;

  const auto logs = list_rank_files(run_dir, records::kLogExtension);
  const bool metrics = !list_rank_files(run_dir, records::kMetricsExtension).empty();
  if (logs.empty() && !metrics && summary.job.empty()) {
    throw UsageError("dtrain: report: " + run_dir + ": no " + std::string(records::kPlanFile) +
                     ", " + records::rank_file_pattern(records::kLogExtension) + " or " +
                     records::rank_file_pattern(records::kMetricsExtension) +
                     "; expected the run directory of a dtrain job");
  }
  // The metric files are read once (they are most of the run directory: 21 GB at full detail for
  // 1,024 ranks x 50,000 steps), for the statistics, the series, the bindings, and the heartbeats
  // of the first-error section and of a running job's collective now.
  FirstErrorReading first_error = begin_first_error(run_dir, logs);
  for (const auto& f : logs) {
    report::RankPlace& p = in.places[f.rank];
    p.first_line = read_first_line_time(f.path);
    p.last_line = records::parse_log_timestamp(read_last_line(f.path));
  }
  // Where each rank ran in the attempt that ended the job; a rank without a start line of it
  // keeps its first start line.
  for (const auto& scan : first_error.scans.scans) in.places[scan.rank()].start = scan.start();
  for (const auto& f : logs) {
    auto& start = in.places[f.rank].start;
    if (!start) start = read_rank_start(f.path);
  }
  in.attempts = read_attempt_records(run_dir);
  const int last = report::last_attempt(in.attempts);
  // A running job: the heartbeats of the attempt running, which numbers its collectives from 0
  // again; the first-error section's are the same when it looks at that attempt.
  std::optional<HeartbeatFeed> now_feed;
  if (metrics && last != first_error.scans.attempt) now_feed = heartbeat_feed(run_dir, last);
  if (metrics) {
    report::SeriesBuilder series;
    for (const auto& [rank, place] : in.places) {
      if (place.start) series.set_host(rank, place.start->host);
    }
    in.stats = read_run_stats(run_dir, straggler_threshold, [&](const records::MetricRecord& r) {
      series.add(r);
      report::keep_binding(in.bindings, r);
      first_error.heartbeats.add(r);
      if (now_feed) now_feed->add(r);
    });
    in.series = series.finish();
    out.scaling = scaling_run(summary, *in.stats);
  }
  std::optional<report::HeartbeatTracker> now_tracker =
      now_feed ? std::move(now_feed->tracker) : first_error.heartbeats.tracker;
  in.first_error = finish_first_error(run_dir, std::move(first_error));

  if (const auto arrivals = read_arrival_verdict(run_dir, straggler_threshold)) {
    in.arrivals = report::arrival_section_text(arrivals->first, arrivals->second);
  }
  for (const auto& c : read_checkpoint_records(run_dir)) {
    report::CheckpointInfo info{c, std::nullopt};
    std::error_code ec;
    if (!c.bytes && fs::is_regular_file(c.path, ec)) {
      const auto size = fs::file_size(c.path, ec);
      if (!ec) info.bytes_on_disk = static_cast<long long>(size);
    }
    in.checkpoints.push_back(std::move(info));
  }
  in.job_end = read_job_end_record(run_dir);
  // A job that still runs: the collective its ranks are in now, from its heartbeats (of the
  // attempt running, which numbers its collectives from 0 again).
  in.now = now_us;
  if (report::job_state(in) == "running" && now_tracker) {
    in.hang = report::detect_hang(*now_tracker);
  }
  in.stacks = read_stacks(run_dir);
  std::erase_if(in.stacks, [&](const report::RankStacks& s) {
    return s.attempt != report::last_attempt(in.attempts);
  });
  return out;
}

}  // namespace dtrain::cli
