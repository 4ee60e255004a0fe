// The run directory (runs/<name>-<job id>/): every file in it, who writes it and who reads it.
// Every writer and reader names a file through here, so a name cannot drift between them.
//
// clang-format off
// (the table stays a table: the formatter would reflow its columns into one another)
//   file                  written by                             read by
//   job.yaml              `submit`, `run`: the spec after --set  `stats`, `report` (summary),
//                                                                `supervise` (which scheduler)
//   launch.sh             `submit`, `run`: the script they run   bash, the scheduler; a requeued
//                         or submit (mpijob.yaml on Kubernetes)  job's continuation
//   plan.json             `submit`, `run`: where every rank      `stats`, `report` (summary)
//                         goes; the job id once the scheduler
//                         gave it
//   NAME-ID.out           the batch job's own output: Slurm's    people
//                         --output, the script itself on PBS
//                         and Cobalt
//   exit-status           the batch script's last lines: the     `submit --wait` (schedulers
//                         launch's exit status                   that forget it)
//   rank-NNNNN.log        `run-rank` or the SPANK plugin; after  `logs`, `report`, `timeline`,
//                         a failed attempt `supervise`, `submit` `submit`, `run`, `supervise`
//                         and the batch script (`note-lost-rank`)
//                         append one line to the log of a rank
//                         ended before it heard of a lost rank
//                         (one write, O_APPEND; rank_lines.hpp
//                         LostRankNote)
//   rank-NNNNN.jsonl      libdtrain's Meter                      `stats`, `report`, `logs`,
//                                                                `timeline`, `submit`, `run`
//   attempts.jsonl        `supervise`, one line per attempt      `logs`, `stats`, `report`,
//                                                                `submit --wait`
//   checkpoints.jsonl     libdtrain's Checkpointer, rank 0       `supervise`, `stats`, `report`
//   job-end.jsonl         `submit`, when it saw the job end      `logs`, `report`, `submit`
//   report.html           `report` (its default page)            a browser
//   trace.json            `timeline` (its default output)        Perfetto, chrome://tracing
//   live/                 a rank's logger (run-rank's hang       the other ranks' loggers
//     wait-rank-NNNNN.txt watch) while its rank has waited
//                         DTRAIN_HANG_AFTER in one collective
//                         (removed after)
//   hang.log              the hang watch's verdicts, one line    people, the loggers (named
//                         each                                   yet?), `submit`, `run` (the
//                                                                last verdict after a failure)
//   arrivals/             a rank's logger (run-rank's straggler  rank 0's logger, `stats`,
//     rank-NNNNN.txt      watch): its rank's last collectives'   `report`, `submit`, `run`
//                         waits, replaced every 1-5 s and when
//                         it ends
//   stragglers.log        rank 0's logger: a line each time the  people
//                         straggler it names changes
//   stacks/               the logger whose hang watch gave a     `logs --hang`
//     rank-NNNNN.json     verdict: the stacks of its node's
//                         ranks (eu-stack), before it ends its
//                         rank
// clang-format on
//
// What the files hold is defined beside their readers: rank file names in rank_files.hpp, log
// lines in log_line.hpp and rank_lines.hpp, metric records in metric_record.hpp, attempts,
// checkpoints and job ends in attempt_record.hpp, plan.json in cli/plan/plan_json.cpp. The CLI
// reads and writes them in cli/run_dir.*, except the loggers' watches' own files (live/,
// hang.log, arrivals/, stragglers.log, stacks/: cli/live_watch.*, arrival_watch.*,
// stack_capture.*), rank 0's metrics as `submit --wait` follows them (cli/batch_job.cpp),
// hang.log's last verdict after a failed job (cli/job_launch.cpp) and the commands' outputs,
// report.html and trace.json (cli/output_file.hpp). Names only: nothing to link, so the planner
// (which writes launch.sh's text) includes it too.
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
