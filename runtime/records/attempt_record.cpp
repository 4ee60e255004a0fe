#include "records/attempt_record.hpp"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "records/log_line.hpp"
#include "records/record_fields.hpp"

namespace dtrain::records {
namespace {

// An exit status as `dtrain submit` and the supervisor record it (128 + N after signal N).
constexpr long long kMaxStatus = 255;

AttemptFormatError attempt_format_error(const std::string& where, const std::string& what) {
  return AttemptFormatError("dtrain: " + where + ": " + what);
}

// The fields of one line, its version checked.
RecordFields parse_object(const nlohmann::json& j, std::string_view line,
                          const std::string& where) {
  if (j.is_discarded() || !j.is_object()) {
    throw attempt_format_error(
        where, "expected a JSON object, got \"" + std::string(line.substr(0, 80)) + "\"");
  }
  RecordFields f(j, where, [](const std::string& message) { throw AttemptFormatError(message); });
  const auto v = j.find("v");
  if (v == j.end() || !v->is_number_integer()) f.fail("missing field \"v\" (the schema version)");
  if (!integer_within(*v, 1, kAttemptSchemaVersion)) {
    f.fail("schema version " + shown_value(*v) + " is not known to this dtrain (" +
           std::to_string(kAttemptSchemaVersion) + " is)");
  }
  return f;
}

nlohmann::json parse_json(std::string_view line) {
  return nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
}

}  // namespace

std::string format_attempt_record(const AttemptRecord& r) {
  nlohmann::ordered_json j;
  j["v"] = kAttemptSchemaVersion;
  j["attempt"] = r.attempt;
  j["start"] = r.start;
  j["end"] = r.end;
  j["status"] = r.status;
  j["outcome"] = r.outcome;
  j["cause"] = r.cause;
  j["ranks"] = r.ranks;
  j["nodes"] = r.nodes;
  j["checkpoints"] = r.checkpoints;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string format_checkpoint_record(const CheckpointRecord& r) {
  nlohmann::ordered_json j;
  j["v"] = kAttemptSchemaVersion;
  j["time"] = r.time;
  j["step"] = r.step;
  j["path"] = r.path;
  j["world"] = r.world;
  if (r.seconds) j["seconds"] = *r.seconds;
  if (r.bytes) j["bytes"] = *r.bytes;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

AttemptRecord parse_attempt_record(std::string_view line, const std::string& where) {
  const nlohmann::json j = parse_json(line);
  const RecordFields f = parse_object(j, line, where);
  AttemptRecord r;
  r.attempt = static_cast<int>(f.integer("attempt", 0, kMaxAttempt));
  r.start = f.time_text("start");
  r.end = f.time_text("end");
  r.status = static_cast<int>(f.integer("status", 0, kMaxStatus));
  r.outcome = f.text("outcome");
  if (std::find(kAttemptOutcomes.begin(), kAttemptOutcomes.end(), r.outcome) ==
      kAttemptOutcomes.end()) {
    f.fail("field \"outcome\": expected completed, restarted, ended or stopped, got " +
           shown_value(f.field("outcome")));
  }
  // An end before the start counted the attempt's time backwards: "time lost to failures:
  // 3700.9 s" from an end an hour before its start.
  if (parse_rfc3339(r.end) < parse_rfc3339(r.start)) {
    f.fail("field \"end\": expected a time at or after the attempt's start (" + r.start +
           "), got \"" + r.end + "\"");
  }
  r.cause = f.text("cause");
  r.ranks = static_cast<int>(f.integer("ranks", 0, kMaxIntField));
  const nlohmann::json& nodes = f.field("nodes");
  if (!nodes.is_array()) {
    f.fail("field \"nodes\": expected a list of host names, got " + shown_value(nodes));
  }
  for (const auto& n : nodes) {
    if (!n.is_string()) f.fail("field \"nodes\": expected host names, got " + shown_value(n));
    r.nodes.push_back(n.get<std::string>());
  }
  r.checkpoints = static_cast<int>(f.integer("checkpoints", 0, kMaxIntField));
  return r;
}

CheckpointRecord parse_checkpoint_record(std::string_view line, const std::string& where) {
  const nlohmann::json j = parse_json(line);
  const RecordFields f = parse_object(j, line, where);
  CheckpointRecord r;
  r.time = f.time_text("time");
  r.step = f.integer("step", 0, std::numeric_limits<long long>::max());
  r.path = f.text("path");
  r.world = static_cast<int>(f.integer("world", 1, kMaxIntField));
  if (f.has("seconds")) {
    r.seconds = f.number("seconds", 0, static_cast<double>(kLatestRecordSeconds));
  }
  if (f.has("bytes")) r.bytes = f.integer("bytes", 0, std::numeric_limits<long long>::max());
  return r;
}

std::string format_job_end_record(const JobEndRecord& r) {
  nlohmann::ordered_json j;
  j["v"] = kAttemptSchemaVersion;
  j["status"] = r.status;
  j["walltime_reached"] = r.walltime_reached;
  return j.dump();
}

JobEndRecord parse_job_end_record(std::string_view line, const std::string& where) {
  const nlohmann::json j = parse_json(line);
  const RecordFields f = parse_object(j, line, where);
  JobEndRecord r;
  r.status = static_cast<int>(f.integer("status", 0, kMaxStatus));
  r.walltime_reached = f.boolean("walltime_reached");
  return r;
}

}  // namespace dtrain::records
