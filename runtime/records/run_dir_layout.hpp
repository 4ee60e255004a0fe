// The run directory (runs/<name>-<job id>/): every file in it, who writes it and who reads it.
// Every writer and reader names a file through here, so a name cannot drift between them.
//
// clang-format off
// (the table stays a table: the formatter would reflow its columns into one another)
//   file                  written by                                   read by
//   job.yaml              `dtrain submit`: the spec after --set        `stats`, `report` (summary)
//   launch.sh             `dtrain submit`: the script it runs or       bash, the scheduler; a
//                         submits (mpijob.yaml on Kubernetes)          requeued job's continuation
//   plan.json             `dtrain submit`: where every rank goes, the  `stats`, `report` (summary)
//                         job id once the scheduler gave it
//   NAME-ID.out           the batch job's own output: Slurm's          people
//                         --output, the script itself on PBS, Cobalt
//   exit-status           the batch script's last lines: the launch's  `submit --wait` (schedulers
//                         exit status                                  that forget it)
//   rank-NNNNN.log        `dtrain run-rank`, the SPANK plugin; after a `logs`, `report`,
//                         failed attempt `supervise`, `submit` and     `timeline`, `submit`,
//                                                                      `supervise`
//                         the batch script (`note-lost-rank`) append
//                         one line to the log of a rank ended before
//                         it heard of a lost rank (one write, O_APPEND;
//                         rank_lines.hpp LostRankNote)
//   rank-NNNNN.jsonl      libdtrain's Meter                            `stats`, `report`, `logs`,
//                                                                      `timeline`, `submit --wait`
//   attempts.jsonl        `dtrain supervise`, one line per attempt     `logs`, `stats`, `report`,
//                                                                      `submit --wait`
//   checkpoints.jsonl     libdtrain's Checkpointer, rank 0             `supervise`, `stats`,
//                                                                      `report`
//   job-end.jsonl         `dtrain submit`, when it saw the job end     `logs`, `report`
//   report.html           `dtrain report` (its default page)           a browser
//   trace.json            `dtrain timeline` (its default output)       Perfetto, chrome://tracing
//   live/wait-NNNNNN.txt  a rank's logger (run-rank's hang watch)      the other ranks' loggers
//                         while its rank has waited DTRAIN_HANG_AFTER
//                         in one collective (removed after)
//   hang.log              the hang watch's verdicts, one line each     people
//   arrivals/rank-NNNNN   a rank's logger (run-rank's straggler        rank 0's logger, `stats`,
//     .txt                watch): its rank's last collectives' waits,  `report`
//                         replaced every 1-5 s and when it ends
//   stragglers.log        rank 0's logger: a line each time the        people, `stats`, `report`
//                         straggler named changes
//   stacks/rank-NNNNN     the logger whose hang watch gave a verdict:  `logs --hang`, `report`
//     .json               the stacks of its node's ranks (eu-stack), before
//                         it ends its rank
// clang-format on
//
// What the files hold is defined beside their readers: rank file names in rank_files.hpp, log
// lines in log_line.hpp and rank_lines.hpp, metric records in metric_record.hpp, attempts,
// checkpoints and job ends in attempt_record.hpp, plan.json in cli/plan/plan_json.cpp. The CLI's
// I/O of them is cli/run_dir.*. Names only: nothing to link, so the planner (which writes
// launch.sh's text) includes it too.
#pragma once

#include <string>
#include <string_view>

namespace dtrain::records {

inline constexpr std::string_view kSpecFile = "job.yaml";
inline constexpr std::string_view kScriptFile = "launch.sh";
inline constexpr std::string_view kManifestFile = "mpijob.yaml";  // instead of launch.sh on k8s
inline constexpr std::string_view kPlanFile = "plan.json";
inline constexpr std::string_view kExitStatusFile = "exit-status";
inline constexpr std::string_view kAttemptsFile = "attempts.jsonl";
inline constexpr std::string_view kCheckpointsFile = "checkpoints.jsonl";
inline constexpr std::string_view kJobEndFile = "job-end.jsonl";
inline constexpr std::string_view kReportFile = "report.html";
inline constexpr std::string_view kTraceFile = "trace.json";
inline constexpr std::string_view kLiveDir = "live";
inline constexpr std::string_view kHangLogFile = "hang.log";
inline constexpr std::string_view kStragglersLogFile = "stragglers.log";
// arrivals/rank-NNNNN.txt; apart from live/, whose changes the hang watch reads whole.
inline constexpr std::string_view kArrivalsDir = "arrivals";
inline constexpr std::string_view kStacksDir = "stacks";
inline constexpr std::string_view kStacksExtension = "json";  // stacks/rank-NNNNN.json

// A rank's files: kRankFilePrefix, the rank in five digits or more, '.', the extension
// (rank_files.hpp writes and parses the names).
inline constexpr std::string_view kRankFilePrefix = "rank-";
inline constexpr std::string_view kLogExtension = "log";
inline constexpr std::string_view kMetricsExtension = "jsonl";

// The batch job's own output, NAME-ID.out: batch_output_prefix(name), the job id as the scheduler
// or the script spells it ("%j", "$DTRAIN_JOB_ID"), kBatchOutputExtension.
inline constexpr std::string_view kBatchOutputExtension = ".out";
inline std::string batch_output_prefix(std::string_view job_name) {
  return std::string(job_name) + "-";
}

}  // namespace dtrain::records
