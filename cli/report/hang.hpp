// `dtrain logs --hang`: from the collective heartbeats (metric schema v2, "coll" records), which
// ranks never entered collective #k that the others reached, and which entered one and never left,
// with the times; a collective that failed (its exit heartbeat says so) and the ranks that
// reached it only after it failed on the others. Collectives are numbered per rank from 0 in call
// order, so in a healthy job every rank's #k is the same call. Pure: the command feeds the records
// of each rank here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "records/metric_record.hpp"

namespace dtrain::report {

struct RankProgress {
  int rank = 0;
  std::string host = "?";
  long long entered = -1;  // highest collective # entered (-1: none)
  std::string op;          // of that collective
  long long bytes = 0;
  std::optional<std::int64_t> entered_at;  // microseconds since the epoch
  long long left = -1;                     // highest collective # left
  std::optional<std::int64_t> left_at;
  // Any step or collective record: the last sign of life in the metrics (resource samples, taken
  // by the Meter's own thread while training may hang, do not count).
  std::optional<std::int64_t> last_record;
  long long failed = -1;  // the lowest collective # whose exit record says "failed" (-1: none)
  std::optional<std::int64_t> failed_at;
};

// A restarted job appends every attempt's records to the same files and numbers collectives from
// 0 again, so only one attempt's records are compared: the highest attempt seen that is at least
// `attempt` (the one that ended the job, from attempts.jsonl and the start lines); records of
// earlier attempts are dropped.
class HeartbeatTracker {
 public:
  explicit HeartbeatTracker(int attempt = 0) : attempt_(attempt) {}
  int attempt() const { return attempt_; }
  void add_rank(int rank, std::string host);  // a rank with a metric file (maybe no heartbeat)
  void add(const records::MetricRecord& record);
  const std::map<int, RankProgress>& ranks() const { return ranks_; }
  bool any_heartbeat() const { return any_heartbeat_; }

 private:
  std::map<int, RankProgress> ranks_;
  bool any_heartbeat_ = false;
  int attempt_;
};

struct HangReport {
  bool heartbeats = false;  // false: no "coll" records at all, nothing can be said
  int ranks = 0;
  // The first collective some ranks reached and others did not (none when all reached the same).
  std::optional<long long> missed_seq;
  std::string missed_what;            // "allreduce of 4096 bytes"
  std::vector<RankProgress> reached;  // entered missed_seq or later
  std::vector<RankProgress> never_entered;
  // Ranks inside a collective they never left (entered > left).
  std::vector<RankProgress> stuck;
  // Ranks at the same collective # calling different operations or sizes (a desync).
  std::vector<RankProgress> mismatched;
  // The lowest collective # that failed on some rank (its exit record says "failed"), the ranks
  // it failed on, and the ranks that entered it only after the first of those failures (or not
  // at all): those kept the others waiting (a stopped rank that the launcher woke with SIGCONT).
  std::optional<long long> failed_seq;
  std::string failed_what;
  std::vector<RankProgress> failed;
  std::vector<RankProgress> late;
  long long highest_seq = -1;
};

HangReport detect_hang(const HeartbeatTracker& tracker);

std::string format_hang(const HangReport& report);
nlohmann::json hang_to_json(const HangReport& report);

}  // namespace dtrain::report
