#include "records/metric_record.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace dtrain::records {
namespace {

MetricFormatError format_error(const std::string& where, const std::string& what) {
  return MetricFormatError("dtrain: stats: " + where + ": " + what);
}

const nlohmann::json* find(const nlohmann::json& record, const char* name) {
  auto it = record.find(name);
  return it == record.end() ? nullptr : &*it;
}

template <typename T>
T number(const nlohmann::json& record, const char* name, const std::string& where) {
  const nlohmann::json* v = find(record, name);
  if (v == nullptr) throw format_error(where, std::string("missing field \"") + name + "\"");
  if (!v->is_number()) {
    throw format_error(where,
                       std::string("field \"") + name + "\": expected a number, got " + v->dump());
  }
  if constexpr (std::is_integral_v<T>) {
    if (!v->is_number_integer()) {
      throw format_error(
          where, std::string("field \"") + name + "\": expected an integer, got " + v->dump());
    }
  }
  return v->get<T>();
}

double non_negative(const nlohmann::json& record, const char* name, const std::string& where) {
  const double v = number<double>(record, name, where);
  if (!(v >= 0) || !std::isfinite(v)) {
    throw format_error(where, std::string("field \"") + name +
                                  "\": expected a finite number >= 0, got " +
                                  find(record, name)->dump());
  }
  return v;
}

std::string text(const nlohmann::json& record, const char* name, const std::string& where) {
  const nlohmann::json* v = find(record, name);
  if (v == nullptr) throw format_error(where, std::string("missing field \"") + name + "\"");
  if (!v->is_string()) {
    throw format_error(where,
                       std::string("field \"") + name + "\": expected a string, got " + v->dump());
  }
  return v->get<std::string>();
}

void parse_step(const nlohmann::json& record, const std::string& where, MetricRecord& out) {
  out.type = RecordType::kStep;
  out.step = number<long long>(record, "step", where);
  out.samples = number<long long>(record, "samples", where);
  out.seconds = non_negative(record, "seconds", where);
  if (out.samples < 0) {
    throw format_error(
        where, "field \"samples\": expected an integer >= 0, got " + std::to_string(out.samples));
  }
  if (out.version >= 2) {
    out.comm_seconds = non_negative(record, "comm_seconds", where);
    if (find(record, "data_seconds") != nullptr) {
      out.data_seconds = non_negative(record, "data_seconds", where);
    }
  }
}

void parse_collective(const nlohmann::json& record, const std::string& where, MetricRecord& out) {
  out.type = RecordType::kCollective;
  out.seq = number<long long>(record, "seq", where);
  out.op = text(record, "op", where);
  out.bytes = number<long long>(record, "bytes", where);
  const std::string phase = text(record, "phase", where);
  if (phase != "enter" && phase != "exit") {
    throw format_error(where,
                       "field \"phase\": expected \"enter\" or \"exit\", got \"" + phase + "\"");
  }
  out.enter = phase == "enter";
  if (const auto* failed = find(record, "failed"); failed != nullptr) {
    if (!failed->is_boolean()) {
      throw format_error(where, "field \"failed\": expected true or false, got " + failed->dump());
    }
    out.failed = failed->get<bool>();
  }
  if (out.seq < 0 || out.bytes < 0) {
    throw format_error(where, "fields \"seq\" and \"bytes\": expected integers >= 0");
  }
}

}  // namespace

std::string format_step_record(const MetricRecord& r) {
  // ordered_json keeps the documented field order; dump() writes the shortest text that reads
  // back as the same double.
  nlohmann::ordered_json line = {{"v", kMetricSchemaVersion},
                                 {"type", "step"},
                                 {"time", r.time},
                                 {"rank", r.rank},
                                 {"step", r.step},
                                 {"samples", r.samples},
                                 {"seconds", r.seconds},
                                 {"comm_seconds", r.comm_seconds.value_or(0.0)}};
  if (r.data_seconds) line["data_seconds"] = *r.data_seconds;
  if (r.attempt > 0) line["attempt"] = r.attempt;
  return line.dump();
}

int format_collective_record(char* buffer, std::size_t size, double time, int rank,
                             std::uint64_t seq, const char* op, std::size_t bytes, bool enter,
                             bool failed, int attempt) noexcept {
  const int n =
      std::snprintf(buffer, size,
                    "{\"v\":%d,\"type\":\"coll\",\"time\":%.6f,\"rank\":%d,\"seq\":%llu,"
                    "\"op\":\"%s\",\"bytes\":%zu,\"phase\":\"%s\"%s",
                    kMetricSchemaVersion, time, rank, static_cast<unsigned long long>(seq), op,
                    bytes, enter ? "enter" : "exit", !enter && failed ? ",\"failed\":true" : "");
  if (n < 0 || static_cast<std::size_t>(n) >= size) return n;
  const int tail = attempt > 0 ? std::snprintf(buffer + n, size - static_cast<std::size_t>(n),
                                               ",\"attempt\":%d}", attempt)
                               : std::snprintf(buffer + n, size - static_cast<std::size_t>(n), "}");
  return tail < 0 ? tail : n + tail;
}

MetricRecord parse_metric_record(std::string_view line, const std::string& where) {
  nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (record.is_discarded() || !record.is_object()) {
    throw format_error(where, "expected one JSON object per line");
  }
  MetricRecord out;
  out.version = number<int>(record, "v", where);
  if (out.version < 1 || out.version > kMetricSchemaVersion) {
    throw format_error(where, "schema version " + std::to_string(out.version) +
                                  " is not supported; expected 1 to " +
                                  std::to_string(kMetricSchemaVersion));
  }
  out.rank = number<int>(record, "rank", where);
  if (out.rank < 0) {
    throw format_error(where,
                       "field \"rank\": expected an integer >= 0, got " + std::to_string(out.rank));
  }
  if (find(record, "attempt") != nullptr) {
    out.attempt = number<int>(record, "attempt", where);
    if (out.attempt < 0) {
      throw format_error(
          where, "field \"attempt\": expected an integer >= 0, got " + std::to_string(out.attempt));
    }
  }
  // v1 made "time" optional in practice (early files lack it); v2 requires it.
  if (out.version >= 2 || find(record, "time") != nullptr) {
    out.time = number<double>(record, "time", where);
  }
  if (out.version == 1) {
    parse_step(record, where, out);
    return out;
  }
  const std::string type = text(record, "type", where);
  if (type == "step") {
    parse_step(record, where, out);
  } else if (type == "coll") {
    parse_collective(record, where, out);
  } else {
    throw format_error(where,
                       "field \"type\": expected \"step\" or \"coll\", got \"" + type + "\"");
  }
  return out;
}

}  // namespace dtrain::records
