// The run directory on disk (its files, their writers and readers: records/run_dir_layout.hpp):
// job.yaml, launch.sh and plan.json, written here when a job is submitted, and the ranks'
// rank-NNNNN.log / rank-NNNNN.jsonl, written by run-rank or the SPANK plugin and by libdtrain's
// Meter and read here for `dtrain logs`, `stats`, `report`, `timeline` and `submit`: which rank
// files exist, the bytes of a rank log, where each rank ran (the start line), the metric records
// one at a time; attempts.jsonl, checkpoints.jsonl, job-end.jsonl, exit-status and the ranks'
// arrivals/ too. Not the only CLI code that touches the run directory: the loggers' watches keep
// their own files (live/, hang.log, arrivals/, stragglers.log, stacks/: live_watch.*,
// arrival_watch.*, stack_capture.*), `submit --wait` follows rank 0's metrics itself
// (batch_job.cpp), job_launch.cpp quotes hang.log's last verdict, and the commands' own outputs,
// report.html and trace.json, are output_file.hpp's. What the contents mean is decided in
// dtrain::records, dtrain::report and run_summary.hpp.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/launch_plan.hpp"
#include "records/attempt_record.hpp"
#include "records/metric_record.hpp"
#include "records/rank_lines.hpp"
#include "report/first_error.hpp"
#include "report/hang.hpp"
#include "report/log_merge.hpp"
#include "report/rank_log_scan.hpp"
#include "report/requeue_request.hpp"
#include "report/scaling.hpp"
#include "report/stats.hpp"
#include "run_summary.hpp"

namespace dtrain::cli {

// Reads a spec file, refusing what is not a regular file (directories, FIFOs, devices), unreadable
// files and files over the size limit (dtrain::InputFileError: bad input).
std::string read_spec_file(const std::string& path);

// Appends `record` and a newline in one write(2) (O_APPEND: lines of several writers never
// interleave); throws naming the file when it cannot.
void append_whole_line(const std::string& path, const std::string& record);

// Creates `run_dir` (which must not exist or be empty) and writes job.yaml, launch.sh, plan.json.
void write_run_dir(const plan::LaunchPlan& plan, const std::string& spec_text);

// Rewrites plan.json in plan.run_dir (a batch job's id is known only after submission).
void write_plan_json(const plan::LaunchPlan& plan);

// The spec the run's job was planned from (job.yaml, overrides applied) and its path. Throws
// InputFileError naming the file when it is missing or cannot be read.
struct RunSpec {
  std::string path;
  std::string text;
};
RunSpec read_run_spec(const std::string& run_dir);

// Reading.

struct RankFile {
  int rank = 0;
  std::string path;
};

// rank-NNNNN.<extension> files of `run_dir`, by rank: regular files (after symlinks) with the
// name the writers give (records::parse_rank_file_name); anything else of the kind (a FIFO, a
// device, a dangling symlink or a loop, rank-000001.log) is left out. Throws UsageError when
// `run_dir` is not a directory or cannot be listed.
std::vector<RankFile> list_rank_files(const std::string& run_dir, std::string_view extension);

// The rank-NNNNN.<extension> files list_rank_files leaves out because they cannot be read, with
// why ("a FIFO (named pipe)", "cannot open it: No such file or directory"): never opened for
// reading, so a FIFO never blocks and /dev/zero is never read.
std::vector<report::UnreadableLog> list_unreadable_rank_files(const std::string& run_dir,
                                                              std::string_view extension);

// list_rank_files(run_dir, records::kMetricsExtension); throws UsageError when there is none.
std::vector<RankFile> list_metric_files(const std::string& run_dir);

// Throws UsageError naming `run_dir` and what it is when it is not a directory (nothing, a file,
// a symbolic link loop).
void require_run_dir(const std::string& run_dir);

// The start line run-rank wrote first in a rank log, when it did.
std::optional<records::RankStart> read_rank_start(const std::string& log_path);

// The time of a log's first line (microseconds since the epoch), when it has one.
std::optional<std::int64_t> read_first_line_time(const std::string& log_path);

// The last line of a file (up to 64 KiB from its end), "" for an empty file.
std::string read_last_line(const std::string& path);

// rank -> host from the start lines of the run's logs; ranks without one are left out.
std::map<int, std::string> read_rank_hosts(const std::string& run_dir);
// rank -> host of the ranks that took part in attempt `attempt` of a restarted job: from each log's
// last start line of that attempt (a restart appends to the logs, and the world may change from
// one attempt to the next); ranks without one are left out. Reads the logs whole.
std::map<int, std::string> read_attempt_hosts(const std::string& run_dir, int attempt);

// Calls `each` for every line of the file, in order, reading 1 MiB at a time: one open file.
void for_each_line(const std::string& path, const std::function<void(std::string_view)>& each);

// Calls `each` for every record of every rank-NNNNN.jsonl, one file after the other in rank
// order. Throws UsageError when there is no metric file, records::MetricFormatError for a bad line.
void for_each_metric_record(const std::string& run_dir,
                            const std::function<void(const records::MetricRecord&)>& each);

// Every rank's collective waits its logger published (RUN_DIR/arrivals/rank-NNNNN.txt,
// arrival_watch.hpp), by rank; a file half written, of another version or unreadable is left out
// (they are replaced while the job runs).
std::vector<report::RankArrivals> read_rank_arrivals(const std::string& run_dir);
// Their verdict (report::judge_arrivals) and how many ranks it compared; nullopt when fewer than
// two ranks published or too few collectives were in common.
std::optional<std::pair<report::ArrivalVerdict, std::size_t>> read_arrival_verdict(
    const std::string& run_dir, double straggler_threshold);
// The verdict of arrivals already read (read_run_stats reads them once for both uses).
std::optional<std::pair<report::ArrivalVerdict, std::size_t>> judge_rank_arrivals(
    const std::vector<report::RankArrivals>& arrivals, double straggler_threshold);

// The run's per-rank throughput from its metric files, with each rank's host from its log, and of
// a job that restarted, the time lost to failures (attempts.jsonl, checkpoints.jsonl), and the
// arrivals' verdict (read_arrival_verdict). `also`, when given, sees every record too, so another
// reader needs no second pass over the files.
report::RunStats read_run_stats(const std::string& run_dir,
                                double straggler_threshold = report::kDefaultStragglerThreshold,
                                const std::function<void(const records::MetricRecord&)>& also = {});

// The collective heartbeats of the run's metric files, of the highest attempt at least `attempt`
// (report::HeartbeatTracker); nullopt when it has no metric file.
std::optional<report::HeartbeatTracker> read_heartbeats(const std::string& run_dir,
                                                        int attempt = 0);

// A HeartbeatTracker set up and then fed the metric records one at a time, by a reader that
// passes over the files once for several purposes (`report`: run_dir_page.cpp) where
// read_heartbeats and read_first_error pass over them for theirs alone.
struct HeartbeatFeed {
  std::optional<report::HeartbeatTracker> tracker;  // none: the run has no metric file
  bool only = false;  // of the tracker's attempt only: a later attempt's records are left out
  void add(const records::MetricRecord& record);
};
// What read_heartbeats(run_dir, attempt) reads, to be fed.
HeartbeatFeed heartbeat_feed(const std::string& run_dir, int attempt);

// The attempt that ended the job (or runs now), from 0: the one after the last record of
// attempts.jsonl when that says "restarted", else that record's; 0 without records.
int read_last_attempt(const std::string& run_dir);

// The scans of `logs` (all or some of the run's rank logs) of one attempt: `attempt` when given,
// else the attempt that ended the job (the last one attempts.jsonl records, or a later one a log
// started). A log without a start line of that attempt is left out: that rank was not in it.
struct AttemptScans {
  int attempt = 0;
  int last_recorded = 0;  // read_last_attempt's
  std::vector<report::RankLogScan> scans;
};
AttemptScans read_attempt_scans(const std::string& run_dir, const std::vector<RankFile>& logs,
                                std::optional<int> attempt = std::nullopt);

// After a failed attempt (from 0; the one that ended the job when not given), by the process that
// outlived its launch: appends to the log of each rank that was ended before it heard what another
// rank reported of a lost peer the line that says it (report::lost_rank_notes; `writer` names the
// command), one write each. Returns how many; none when no rank named a lost peer or every one did.
// Throws naming a log it cannot append to.
int append_lost_rank_notes(const std::string& run_dir, std::optional<int> attempt,
                           std::string_view writer);

// The status a launch that ended with `launcher_status` is acted on with: kExitRequeue when the
// ranks of its last attempt said so in their logs though the launcher did not pass it on
// (report::launch_status_from_ranks), else `launcher_status`. Logs it cannot read say nothing.
report::LaunchStatus read_launch_status(const std::string& run_dir, int launcher_status);

// `dtrain logs --first-error` of `logs` (all or some of the run's rank logs), with the heartbeats
// as evidence; `dtrain submit` prints the same when a job fails. Of a job that restarted, only the
// attempt that ended it counts, or `attempt` (from 0) when given: each log's lines from its last
// start line of that attempt on (a log without one is left out: that rank was not in it), up to a
// later attempt's start line, and that attempt's heartbeats. A job that `dtrain submit` saw end at
// its walltime (job-end.jsonl) blames no rank of its last attempt.
// `scans`, when given, receives each log's scan of that attempt (where and how each rank ran).
report::FirstErrorReport read_first_error(const std::string& run_dir,
                                          const std::vector<RankFile>& logs,
                                          std::optional<int> attempt = std::nullopt,
                                          std::vector<report::RankLogScan>* scans = nullptr);
// read_first_error in halves around the pass over the metric files: the logs' scans and the
// heartbeats to feed (every record of the run's metric files, in rank order), then the report.
struct FirstErrorReading {
  AttemptScans scans;
  HeartbeatFeed heartbeats;
};
FirstErrorReading begin_first_error(const std::string& run_dir, const std::vector<RankFile>& logs,
                                    std::optional<int> attempt = std::nullopt);
report::FirstErrorReport finish_first_error(const std::string& run_dir, FirstErrorReading reading,
                                            std::vector<report::RankLogScan>* scans = nullptr);

// What plan.json and job.yaml say about the job (parse_run_summary); a file that is missing, or
// is no regular file or too large to be what dtrain wrote, says nothing.
RunSummary read_run_summary(const std::string& run_dir);

// The exit status the batch script wrote to exit-status, when it did.
std::optional<int> read_exit_status(const std::string& run_dir);

// The run's attempt records (attempts.jsonl, written by `dtrain supervise`), in order; none when
// the job was not supervised. Throws records::AttemptFormatError naming the line of a bad one.
std::vector<records::AttemptRecord> read_attempt_records(const std::string& run_dir);
// Appends one record to attempts.jsonl; throws naming the file when it cannot.
void append_attempt_record(const std::string& run_dir, const records::AttemptRecord& record);
// How the job ended, as `dtrain submit` saw it (job-end.jsonl): the last record, none when submit
// did not see the end (a batch job submitted without --wait). Appends throw naming the file.
void append_job_end_record(const std::string& run_dir, const records::JobEndRecord& record);
std::optional<records::JobEndRecord> read_job_end_record(const std::string& run_dir);
// The checkpoint records (checkpoints.jsonl, written by libdtrain's Checkpointer), in order.
std::vector<records::CheckpointRecord> read_checkpoint_records(const std::string& run_dir);

}  // namespace dtrain::cli
