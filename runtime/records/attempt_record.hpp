// How a job's attempts went and how it ended, in the run directory (docs/fault-tolerance.md):
//   attempts.jsonl    one line per attempt, appended by `dtrain supervise` when the attempt ends:
//                     {"v":1,"attempt":0,"start":"2026-11-26T02:00:00.000000Z","end":"...",
//                      "status":1,"outcome":"restarted","cause":"rank 1 on node0 exited with
//                      status 3: boom","ranks":2,"nodes":["node0"],"checkpoints":1}
//   checkpoints.jsonl one line per durable save, appended by libdtrain's Checkpointer on rank 0:
//                     {"v":1,"time":"...","step":40,"path":"/ck/ckpt-000000000040","world":2,
//                      "seconds":0.84,"bytes":52428800}  (the last two since 2026-11-28)
//   job-end.jsonl     how the whole job ended, appended by `dtrain submit` when it saw the end
//                     (the local site, or --wait): {"v":1,"status":124,"walltime_reached":true}
//                     so that `dtrain logs --first-error` says what submit said, later too.
// The supervisor reads the second to tell an attempt that made progress from one that did not;
// `dtrain logs` and people read the first. Writers and readers share this one schema: readers
// ignore fields they do not know and reject versions they do not. Pure: no clock, no files.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/errors.hpp"
#include "records/run_dir_layout.hpp"  // the files' names

namespace dtrain::records {

inline constexpr int kAttemptSchemaVersion = 1;
// The highest attempt number read anywhere (DTRAIN_ATTEMPT, a record's "attempt", a start line's):
// a spec's restarts stop at 1000 (plan::kMaxRestarts), and six digits leave room without letting
// "attempt + 1" wrap.
inline constexpr int kMaxAttempt = 999999;

// Every outcome the supervisor writes (cli/supervisor.cpp); a reader refuses any other, which it
// would otherwise have to count as one of them (an unknown one read as "failed and restarted").
inline constexpr std::array<std::string_view, 4> kAttemptOutcomes = {"completed", "restarted",
                                                                     "ended", "stopped"};

struct AttemptRecord {
  int attempt = 0;      // 0-based, as DTRAIN_ATTEMPT
  std::string start;    // log-line time (log_line.hpp): "2026-11-26T02:00:00.000000Z"
  std::string end;      // the same
  int status = 0;       // the launch's exit status (128 + N when killed by signal N)
  std::string outcome;  // "completed", "restarted", "ended" (a failure not restarted), "stopped"
  std::string cause;    // why it ended: the first failure's summary, the signal, "" when completed
  int ranks = 0;        // rank logs the attempt wrote
  std::vector<std::string> nodes;  // the hosts its ranks ran on, sorted
  int checkpoints = 0;             // durable checkpoints saved during the attempt
};

struct CheckpointRecord {
  std::string time;  // log-line time of the save
  long long step = 0;
  std::string path;  // the checkpoint file
  int world = 0;     // ranks that saved it
  // How long the save took on rank 0, from entering save() to the file being durable (the
  // gathering of the ranks' parts included), and the file's size. Absent in records written
  // before 2026-11-28, and the size when the file could not be measured.
  std::optional<double> seconds = std::nullopt;
  std::optional<long long> bytes = std::nullopt;
};

struct JobEndRecord {
  int status = 0;                 // the job's exit status as submit reported it
  bool walltime_reached = false;  // the scheduler's time limit (or local `timeout`) ended it
};

// A malformed record: bad input (the CLI: exit 2).
class AttemptFormatError : public InputError {
 public:
  using InputError::InputError;
};

// One JSON line each, without the '\n'.
std::string format_attempt_record(const AttemptRecord& record);
std::string format_checkpoint_record(const CheckpointRecord& record);
std::string format_job_end_record(const JobEndRecord& record);

// `where` ("runs/a/attempts.jsonl:2") follows "dtrain: " in any error, which names the field and
// its range (records/record_fields.hpp): "attempt" 0 to kMaxAttempt, "status" 0 to 255, counts 0
// to INT_MAX ("world" from 1), a checkpoint's "step" and "bytes" 0 to INT64_MAX and "seconds" 0 to
// kLatestRecordSeconds, times as the logs write them up to 2100 (kLatestRecordSeconds), an
// attempt's "end" not before its "start" and its "outcome" one of kAttemptOutcomes.
AttemptRecord parse_attempt_record(std::string_view line, const std::string& where);
CheckpointRecord parse_checkpoint_record(std::string_view line, const std::string& where);
JobEndRecord parse_job_end_record(std::string_view line, const std::string& where);

}  // namespace dtrain::records
