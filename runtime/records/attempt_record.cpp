#include "records/attempt_record.hpp"

#include <nlohmann/json.hpp>

namespace dtrain::records {
namespace {

AttemptFormatError format_error(const std::string& where, const std::string& what) {
  return AttemptFormatError("dtrain: " + where + ": " + what);
}

// The object of one line, its version checked.
nlohmann::json parse_object(std::string_view line, const std::string& where) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw format_error(where,
                       "expected a JSON object, got \"" + std::string(line.substr(0, 80)) + "\"");
  }
  const auto v = j.find("v");
  if (v == j.end() || !v->is_number_integer()) {
    throw format_error(where, "missing field \"v\" (the schema version)");
  }
  if (v->get<long long>() < 1 || v->get<long long>() > kAttemptSchemaVersion) {
    throw format_error(where, "schema version " + v->dump() + " is not known to this dtrain (" +
                                  std::to_string(kAttemptSchemaVersion) + " is)");
  }
  return j;
}

const nlohmann::json& field(const nlohmann::json& j, const char* name, const std::string& where) {
  const auto it = j.find(name);
  if (it == j.end()) throw format_error(where, std::string("missing field \"") + name + "\"");
  return *it;
}

long long integer(const nlohmann::json& j, const char* name, const std::string& where) {
  const nlohmann::json& v = field(j, name, where);
  if (!v.is_number_integer()) {
    throw format_error(where,
                       std::string("field \"") + name + "\": expected an integer, got " + v.dump());
  }
  return v.get<long long>();
}

std::string text(const nlohmann::json& j, const char* name, const std::string& where) {
  const nlohmann::json& v = field(j, name, where);
  if (!v.is_string()) {
    throw format_error(where,
                       std::string("field \"") + name + "\": expected a string, got " + v.dump());
  }
  return v.get<std::string>();
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
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

AttemptRecord parse_attempt_record(std::string_view line, const std::string& where) {
  const nlohmann::json j = parse_object(line, where);
  AttemptRecord r;
  r.attempt = static_cast<int>(integer(j, "attempt", where));
  r.start = text(j, "start", where);
  r.end = text(j, "end", where);
  r.status = static_cast<int>(integer(j, "status", where));
  r.outcome = text(j, "outcome", where);
  r.cause = text(j, "cause", where);
  r.ranks = static_cast<int>(integer(j, "ranks", where));
  const nlohmann::json& nodes = field(j, "nodes", where);
  if (!nodes.is_array()) {
    throw format_error(where,
                       "field \"nodes\": expected a list of host names, got " + nodes.dump());
  }
  for (const auto& n : nodes) {
    if (!n.is_string()) {
      throw format_error(where, "field \"nodes\": expected host names, got " + n.dump());
    }
    r.nodes.push_back(n.get<std::string>());
  }
  r.checkpoints = static_cast<int>(integer(j, "checkpoints", where));
  if (r.attempt < 0) {
    throw format_error(where,
                       "field \"attempt\": expected 0 or more, got " + std::to_string(r.attempt));
  }
  return r;
}

CheckpointRecord parse_checkpoint_record(std::string_view line, const std::string& where) {
  const nlohmann::json j = parse_object(line, where);
  CheckpointRecord r;
  r.time = text(j, "time", where);
  r.step = integer(j, "step", where);
  r.path = text(j, "path", where);
  r.world = static_cast<int>(integer(j, "world", where));
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
  const nlohmann::json j = parse_object(line, where);
  JobEndRecord r;
  r.status = static_cast<int>(integer(j, "status", where));
  const nlohmann::json& reached = field(j, "walltime_reached", where);
  if (!reached.is_boolean()) {
    throw format_error(where,
                       "field \"walltime_reached\": expected true or false, got " + reached.dump());
  }
  r.walltime_reached = reached.get<bool>();
  return r;
}

}  // namespace dtrain::records
