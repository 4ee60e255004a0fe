#include "report/lost_time.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "records/log_line.hpp"

namespace dtrain::report {
namespace {

double seconds_since(std::int64_t from, std::int64_t to) {
  return static_cast<double>(std::max<std::int64_t>(0, to - from)) / 1e6;
}

std::string tenths_seconds_text(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

// The last checkpoint saved at or before `crash`, when any.
const records::CheckpointRecord* last_checkpoint_before(
    const std::vector<records::CheckpointRecord>& checkpoints, std::int64_t crash) {
  const records::CheckpointRecord* last = nullptr;
  for (const auto& c : checkpoints) {
    const auto t = records::parse_rfc3339(c.time);
    if (t && *t <= crash && (last == nullptr || c.step >= last->step)) last = &c;
  }
  return last;
}

}  // namespace

LostTime compute_lost_time(const std::vector<records::AttemptRecord>& attempts,
                           const std::vector<records::CheckpointRecord>& checkpoints,
                           const std::map<int, std::int64_t>& first_step_start) {
  LostTime out;
  if (attempts.empty()) return out;
  out.attempts = static_cast<int>(attempts.size()) + (attempts.back().outcome == "restarted");
  const auto job_start = records::parse_rfc3339(attempts.front().start);
  std::optional<std::int64_t> previous_end;  // of the previous failure's lost interval
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const auto& a = attempts[i];
    const auto crash = records::parse_rfc3339(a.end);
    if (a.outcome != "restarted" || !crash) continue;
    FailedAttempt f;
    f.attempt = a.attempt;
    f.crash = *crash;
    f.from = job_start.value_or(*crash);
    if (const auto* c = last_checkpoint_before(checkpoints, *crash)) {
      f.checkpoint_step = c->step;
      f.from = records::parse_rfc3339(c->time).value_or(f.from);
    }
    if (previous_end) f.from = std::max(f.from, *previous_end);
    f.from = std::min(f.from, f.crash);
    f.resumed = f.crash;
    if (const auto it = first_step_start.find(a.attempt + 1); it != first_step_start.end()) {
      f.resumed = std::max(f.crash, it->second);
    } else if (i + 1 < attempts.size()) {
      f.resumed = std::max(f.crash, records::parse_rfc3339(attempts[i + 1].end).value_or(f.crash));
    }
    f.redone_seconds = seconds_since(f.from, f.crash);
    f.restart_seconds = seconds_since(f.crash, f.resumed);
    previous_end = f.resumed;
    out.lost_seconds += f.lost_seconds();
    out.failed.push_back(f);
  }
  return out;
}

std::string format_lost_time(const LostTime& lost) {
  if (lost.attempts == 0) return "";
  // A run that never failed lost no time to failures: say only that
  // (LostTime.ARunThatNeverFailedSaysSoAndNothingMore).
  if (lost.failed.empty() && lost.redone_step_records == 0) {
    return "attempts: " + std::to_string(lost.attempts) + ", none failed\n";
  }
  double redone = 0, restart = 0;
  for (const auto& f : lost.failed) {
    redone += f.redone_seconds;
    restart += f.restart_seconds;
  }
  std::string out = "attempts: " + std::to_string(lost.attempts) + " (" +
                    std::to_string(lost.failed.size()) + " failed and restarted); time lost to " +
                    "failures: " + tenths_seconds_text(lost.lost_seconds) + " (" +
                    tenths_seconds_text(redone) + " of work after the last checkpoint, " +
                    tenths_seconds_text(restart) + " from crash to resumed step)\n";
  for (const auto& f : lost.failed) {
    out += "  attempt " + std::to_string(f.attempt + 1) + " failed at " +
           records::format_log_time(f.crash) + ": " + tenths_seconds_text(f.redone_seconds) +
           " since " +
           (f.checkpoint_step ? "the checkpoint of step " + std::to_string(*f.checkpoint_step)
                              : std::string("the start (no checkpoint)")) +
           ", " + tenths_seconds_text(f.restart_seconds) + " until attempt " +
           std::to_string(f.attempt + 2) + " stepped again\n";
  }
  if (lost.redone_step_records > 0) {
    out += "  " + std::to_string(lost.redone_step_records) +
           " step records of failed attempts redone after a restart are left out of the "
           "throughput (each step counted once)\n";
  }
  return out;
}

nlohmann::json lost_time_to_json(const LostTime& lost) {
  if (lost.attempts == 0) return nullptr;
  nlohmann::json failed = nlohmann::json::array();
  for (const auto& f : lost.failed) {
    failed.push_back(
        {{"attempt", f.attempt},
         {"crash", records::format_log_time(f.crash)},
         {"checkpoint_step", f.checkpoint_step ? nlohmann::json(*f.checkpoint_step) : nullptr},
         {"lost_from", records::format_log_time(f.from)},
         {"resumed", records::format_log_time(f.resumed)},
         {"redone_seconds", f.redone_seconds},
         {"restart_seconds", f.restart_seconds},
         {"lost_seconds", f.lost_seconds()}});
  }
  return {{"attempts", lost.attempts},
          {"lost_seconds", lost.lost_seconds},
          {"redone_step_records", lost.redone_step_records},
          {"failed", failed}};
}

}  // namespace dtrain::report
