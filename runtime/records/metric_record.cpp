#include "records/metric_record.hpp"

#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "records/attempt_record.hpp"
#include "records/record_fields.hpp"

namespace dtrain::records {
namespace {

constexpr long long kMaxInt64 = std::numeric_limits<long long>::max();

// A binding record's own fields, named once for the writer and the reader.
constexpr char kBindingType[] = "binding";
constexpr char kHostField[] = "host";
constexpr char kCpusField[] = "cpus";
constexpr char kGpusField[] = "gpus";
constexpr char kNicsField[] = "nics";

MetricFormatError metric_format_error(const std::string& where, const std::string& what) {
  return MetricFormatError("dtrain: " + where + ": " + what);
}

void parse_step(const RecordFields& f, MetricRecord& out) {
  out.type = RecordType::kStep;
  // The Meter takes any step the program counts, negative too.
  out.step = f.integer("step", std::numeric_limits<long long>::min(), kMaxInt64);
  out.samples = f.integer("samples", 0, kMaxInt64);
  out.seconds = f.number("seconds", 0, kMaxRecordSeconds);
  if (out.version >= 2) {
    out.comm_seconds = f.number("comm_seconds", 0, kMaxRecordSeconds);
    if (f.has("data_seconds")) out.data_seconds = f.number("data_seconds", 0, kMaxRecordSeconds);
  }
}

void parse_collective(const RecordFields& f, MetricRecord& out) {
  out.type = RecordType::kCollective;
  out.seq = f.integer("seq", 0, kMaxInt64);
  out.op = f.text("op");
  out.bytes = f.integer("bytes", 0, kMaxInt64);
  const std::string phase = f.text("phase");
  if (phase != "enter" && phase != "exit") {
    f.fail("field \"phase\": expected \"enter\" or \"exit\", got \"" + phase + "\"");
  }
  out.enter = phase == "enter";
  if (f.has("failed")) out.failed = f.boolean("failed");
}

void parse_resource(const RecordFields& f, MetricRecord& out) {
  out.type = RecordType::kResource;
  out.interval = f.number("interval", 0, kMaxRecordSeconds);
  out.cpu_percent = f.number("cpu_percent", 0, kMaxCpuPercent);
  out.rss_bytes = f.integer("rss_bytes", 0, kMaxInt64);
  if (!f.has("gpu")) return;
  GpuSample gpu;
  gpu.index = static_cast<int>(f.integer("gpu", 0, kMaxIntField));
  if (f.has("gpu_util_percent")) gpu.util_percent = f.number("gpu_util_percent", 0, 100);
  if (f.has("gpu_memory_bytes")) gpu.memory_bytes = f.integer("gpu_memory_bytes", 0, kMaxInt64);
  if (f.has("gpu_power_watts")) gpu.power_watts = f.number("gpu_power_watts", 0, kMaxGpuWatts);
  out.gpu = gpu;
}

void parse_binding(const RecordFields& f, MetricRecord& out) {
  out.type = RecordType::kBinding;
  out.binding.host = f.text(kHostField);
  out.binding.cpus = f.text(kCpusField);
  if (f.has(kGpusField)) out.binding.gpus = f.text(kGpusField);
  const nlohmann::json& nics = f.field(kNicsField);
  if (!nics.is_object()) {
    f.fail(std::string("field \"") + kNicsField +
           "\": expected an object of variable names and values, got " + shown_value(nics));
  }
  for (const auto& [name, value] : nics.items()) {
    if (!value.is_string()) {
      f.fail(std::string("field \"") + kNicsField + "\": expected \"" + name +
             "\" to be a string, got " + shown_value(value));
    }
    out.binding.nics.emplace_back(name, value.get<std::string>());
  }
}

constexpr char kIntervalType[] = "interval";
// An interval record's histograms, by field, in the order written.
constexpr const char* kIntervalMeasures[] = {"samples", "seconds", "comm_seconds", "data_seconds"};

template <typename Interval>
auto& measure(Interval& i, int k) {
  return k == 0 ? i.samples : k == 1 ? i.seconds : k == 2 ? i.comm_seconds : i.data_seconds;
}

void parse_interval(const RecordFields& f, const std::string& where, MetricRecord& out) {
  out.type = RecordType::kInterval;
  StepInterval& i = out.step_interval;
  constexpr long long kMinInt64 = std::numeric_limits<long long>::min();
  i.first_step = f.integer("first_step", kMinInt64, kMaxInt64);
  i.last_step = f.integer("last_step", i.first_step, kMaxInt64);
  const long long count = f.integer("count", 1, kMaxInt64);
  i.began = f.unix_time("began");
  for (int k = 0; k < 4; ++k) {
    const char* name = kIntervalMeasures[k];
    if (k == 3 && !f.has(name)) break;  // no step reported data-loading time
    const nlohmann::json& object = f.field(name);
    if (!object.is_object()) {
      f.fail(std::string("field \"") + name + "\": expected a histogram object, got " +
             shown_value(object));
    }
    const RecordFields h(object, where + ": field \"" + name + "\"",
                         [](const std::string& message) { throw MetricFormatError(message); });
    measure(i, k) = LogHistogram::from_json(h);
    const long long n = measure(i, k).count();
    if (k == 3 ? n > count : n != count) {
      f.fail(std::string("field \"") + name + "\": expected " + (k == 3 ? "at most " : "") +
             std::to_string(count) + " values (\"count\"), got " + std::to_string(n));
    }
  }
}

}  // namespace

std::string format_interval_record(const MetricRecord& r) {
  const StepInterval& i = r.step_interval;
  nlohmann::ordered_json line = {{"v", kMetricSchemaVersion},
                                 {"type", kIntervalType},
                                 {"time", r.time},
                                 {"rank", r.rank},
                                 {"first_step", i.first_step},
                                 {"last_step", i.last_step},
                                 {"count", i.count()},
                                 {"began", i.began}};
  for (int k = 0; k < 4; ++k) {
    if (measure(i, k).count() > 0) line[kIntervalMeasures[k]] = measure(i, k).to_json();
  }
  if (r.attempt > 0) line["attempt"] = r.attempt;
  return line.dump();
}

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

std::string format_resource_record(const MetricRecord& r) {
  nlohmann::ordered_json line = {{"v", kMetricSchemaVersion},
                                 {"type", "resource"},
                                 {"time", r.time},
                                 {"rank", r.rank},
                                 {"interval", r.interval},
                                 {"cpu_percent", r.cpu_percent},
                                 {"rss_bytes", r.rss_bytes}};
  if (r.gpu) {
    line["gpu"] = r.gpu->index;
    if (r.gpu->util_percent) line["gpu_util_percent"] = *r.gpu->util_percent;
    if (r.gpu->memory_bytes) line["gpu_memory_bytes"] = *r.gpu->memory_bytes;
    if (r.gpu->power_watts) line["gpu_power_watts"] = *r.gpu->power_watts;
  }
  if (r.attempt > 0) line["attempt"] = r.attempt;
  return line.dump();
}

std::string format_binding_record(const MetricRecord& r) {
  nlohmann::ordered_json nics = nlohmann::ordered_json::object();
  for (const auto& [name, value] : r.binding.nics) nics[name] = value;
  nlohmann::ordered_json line = {
      {"v", kMetricSchemaVersion},  {"type", kBindingType},      {"time", r.time}, {"rank", r.rank},
      {kHostField, r.binding.host}, {kCpusField, r.binding.cpus}};
  if (r.binding.gpus) line[kGpusField] = *r.binding.gpus;
  line[kNicsField] = std::move(nics);
  if (r.attempt > 0) line["attempt"] = r.attempt;
  // A host name or a variable's value need not be UTF-8: replaced rather than refused.
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
  if (MetricRecord scanned; scan_metric_record(line, scanned)) return scanned;
  nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (record.is_discarded() || !record.is_object()) {
    throw metric_format_error(where, "expected one JSON object per line");
  }
  const RecordFields f(record, where,
                       [](const std::string& message) { throw MetricFormatError(message); });
  MetricRecord out;
  const nlohmann::json& v = f.field("v");
  const auto version = integer_within(v, 1, kMetricSchemaVersion);
  if (!version) {
    f.fail("schema version " + shown_value(v) + " is not supported; expected 1 to " +
           std::to_string(kMetricSchemaVersion));
  }
  out.version = static_cast<int>(*version);
  out.rank = static_cast<int>(f.integer("rank", 0, kMaxIntField));
  if (f.has("attempt")) out.attempt = static_cast<int>(f.integer("attempt", 0, kMaxAttempt));
  // v1 made "time" optional in practice (early files lack it); v2 requires it.
  if (out.version >= 2 || f.has("time")) out.time = f.unix_time("time");
  if (out.version == 1) {
    parse_step(f, out);
    return out;
  }
  const std::string type = f.text("type");
  if (type == "step") {
    parse_step(f, out);
  } else if (type == "coll") {
    parse_collective(f, out);
  } else if (type == "resource") {
    parse_resource(f, out);
  } else if (type == kBindingType) {
    parse_binding(f, out);
  } else if (type == kIntervalType) {
    parse_interval(f, where, out);
  } else {
    f.fail(
        "field \"type\": expected \"step\", \"interval\", \"coll\", \"resource\" or "
        "\"binding\", got \"" +
        type + "\"");
  }
  return out;
}

}  // namespace dtrain::records
