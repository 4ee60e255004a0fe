// `dtrain stats`' time lost to failures (docs/fault-tolerance.md, docs/metrics.md): for each
// attempt that failed and was restarted, the work since the last durable checkpoint that the crash
// threw away, and the time from the crash until the next attempt was back at that checkpoint and
// stepping again. Kept apart from stats.cpp's throughput so each can be read on its own. Pure: the
// command reads attempts.jsonl, checkpoints.jsonl and the metric records and hands them here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "records/attempt_record.hpp"

namespace dtrain::report {

// One attempt that failed and was restarted. Times in microseconds since the epoch. The lost
// interval is [from, resumed]: `from` is the last checkpoint saved before the crash (the start of
// the job when none was), or the end of the previous attempt's lost interval when that is later,
// so that two failures in a row never count the same second twice; `resumed` is when the next
// attempt began its first step (its earliest step record's time less that step's seconds), or,
// when it recorded no step, its end (its own lost interval begins there).
struct FailedAttempt {
  int attempt = 0;
  std::int64_t crash = 0;                    // the attempt's end (attempts.jsonl)
  std::optional<long long> checkpoint_step;  // of the last checkpoint before the crash
  std::int64_t from = 0;
  std::int64_t resumed = 0;
  double redone_seconds = 0;   // crash - from: work done after the checkpoint, lost
  double restart_seconds = 0;  // resumed - crash: ending, backoff, relaunch, loading the checkpoint
  double lost_seconds() const { return redone_seconds + restart_seconds; }
};

struct LostTime {
  int attempts = 0;  // records in attempts.jsonl, plus one when the last says "restarted"
  std::vector<FailedAttempt> failed;
  double lost_seconds = 0;  // the sum over `failed`
  // Step records of failed attempts dropped from the throughput because a later attempt redid the
  // same steps (StatsBuilder): each step is counted once, from the attempt that completed it.
  long long redone_step_records = 0;
};

// `first_step_start[k]`: when attempt k began its first recorded step (microseconds). `job_start`:
// the first attempt's start. Records whose times do not parse are skipped (the reader has already
// refused malformed lines).
LostTime compute_lost_time(const std::vector<records::AttemptRecord>& attempts,
                           const std::vector<records::CheckpointRecord>& checkpoints,
                           const std::map<int, std::int64_t>& first_step_start);

// "attempts: 2 (1 failed); time lost to failures: 14.2 s (...)" and a line per failed attempt;
// "" for a job without attempt records.
std::string format_lost_time(const LostTime& lost);
// null for a job without attempt records.
nlohmann::json lost_time_to_json(const LostTime& lost);

}  // namespace dtrain::report
