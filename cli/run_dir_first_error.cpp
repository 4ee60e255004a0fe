// The collective heartbeats of the run's metric files (`logs --hang`, the report page of a running
// job) and `logs --first-error` with them as evidence: run_dir.hpp's readers of them. Each comes in
// halves (a HeartbeatFeed set up, then fed every record), so that `report` feeds them from its one
// pass over the metric files with the statistics and the page's series (run_dir_page.cpp).
#include <utility>

#include "records/rank_files.hpp"
#include "report/first_error.hpp"
#include "report/unreadable_logs.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {
namespace {

// The heartbeats of `attempt` (or a later one; of `attempt` only when `only`) of the ranks in
// `hosts` and of those with records, to be fed.
HeartbeatFeed feed_of(const std::string& run_dir, int attempt,
                      const std::map<int, std::string>& hosts, bool only) {
  HeartbeatFeed feed;
  feed.only = only;
  if (list_rank_files(run_dir, records::kMetricsExtension).empty()) return feed;
  feed.tracker.emplace(attempt);
  for (const auto& [rank, host] : hosts) feed.tracker->add_rank(rank, host);
  return feed;
}

// Feeds `feed` from a pass of its own over the metric files.
void feed_from_files(const std::string& run_dir, HeartbeatFeed& feed) {
  if (!feed.tracker) return;
  for_each_metric_record(run_dir, [&](const records::MetricRecord& r) { feed.add(r); });
}

}  // namespace

void HeartbeatFeed::add(const records::MetricRecord& r) {
  if (tracker && (!only || r.attempt <= tracker->attempt())) tracker->add(r);
}

HeartbeatFeed heartbeat_feed(const std::string& run_dir, int attempt) {
  // The ranks of a later attempt are those with its start line: the world may have changed, and a
  // rank of the attempt without a heartbeat is the one that never entered the first collective.
  return feed_of(run_dir, attempt,
                 attempt > 0 ? read_attempt_hosts(run_dir, attempt) : read_rank_hosts(run_dir),
                 false);
}

std::optional<report::HeartbeatTracker> read_heartbeats(const std::string& run_dir, int attempt) {
  HeartbeatFeed feed = heartbeat_feed(run_dir, attempt);
  feed_from_files(run_dir, feed);
  return std::move(feed.tracker);
}

FirstErrorReading begin_first_error(const std::string& run_dir, const std::vector<RankFile>& logs,
                                    std::optional<int> wanted) {
  FirstErrorReading out;
  out.scans = read_attempt_scans(run_dir, logs, wanted);
  const int attempt = out.scans.attempt;
  // Of a later attempt, its ranks are those whose logs' last start line is of it (read just now).
  std::map<int, std::string> hosts;
  if (attempt == 0) hosts = read_rank_hosts(run_dir);
  for (const auto& scan : out.scans.scans) {
    if (attempt > 0 && scan.start()) hosts[scan.rank()] = scan.start()->host;
  }
  out.heartbeats = feed_of(run_dir, attempt, hosts, wanted.has_value());
  return out;
}

report::FirstErrorReport finish_first_error(const std::string& run_dir, FirstErrorReading reading,
                                            std::vector<report::RankLogScan>* scans_out) {
  std::vector<report::RankLogScan>& scans = reading.scans.scans;
  std::vector<std::optional<std::int64_t>> last_metric(scans.size());
  std::optional<report::MissedCollective> missed;
  if (const auto& tracker = reading.heartbeats.tracker) {
    for (std::size_t i = 0; i < scans.size(); ++i) {
      auto it = tracker->ranks().find(scans[i].rank());
      if (it != tracker->ranks().end()) last_metric[i] = it->second.last_record;
    }
    missed = report::missed_collective(report::detect_hang(*tracker));
  }
  // The walltime ended the job's last attempt; an earlier one ended on its own.
  const auto end = read_job_end_record(run_dir);
  const bool walltime =
      end && end->walltime_reached && reading.scans.attempt >= reading.scans.last_recorded;
  auto report = report::find_first_error(scans, last_metric, missed, walltime);
  report::add_unreadable_logs(report, list_unreadable_rank_files(run_dir, records::kLogExtension));
  if (scans_out) *scans_out = std::move(scans);
  return report;
}

report::FirstErrorReport read_first_error(const std::string& run_dir,
                                          const std::vector<RankFile>& logs,
                                          std::optional<int> wanted,
                                          std::vector<report::RankLogScan>* scans_out) {
  FirstErrorReading reading = begin_first_error(run_dir, logs, wanted);
  feed_from_files(run_dir, reading.heartbeats);
  return finish_first_error(run_dir, std::move(reading), scans_out);
}

}  // namespace dtrain::cli
