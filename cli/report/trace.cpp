#include "report/trace.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "records/log_line.hpp"
#include "report/json_text.hpp"

namespace dtrain::report {
namespace {

constexpr int kStepThread = 0;
constexpr int kCollectiveThread = 1;

std::string quoted(const std::string& s) { return json_text(nlohmann::json(s)); }

}  // namespace

TraceWriter::TraceWriter(Sink sink) : sink_(std::move(sink)) {
  sink_("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
}

void TraceWriter::event(const std::string& json) {
  sink_(events_ == 0 ? json : ",\n" + json);
  ++events_;
}

void TraceWriter::add_rank(int rank, const std::string& host) {
  const std::string pid = std::to_string(rank);
  event("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid +
        ",\"args\":{\"name\":" + quoted("rank " + pid + " (" + host + ")") + "}}");
  event("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + pid +
        ",\"args\":{\"sort_index\":" + pid + "}}");
  event("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid +
        ",\"tid\":" + std::to_string(kStepThread) + ",\"args\":{\"name\":\"steps\"}}");
  event("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid +
        ",\"tid\":" + std::to_string(kCollectiveThread) + ",\"args\":{\"name\":\"collectives\"}}");
}

void TraceWriter::complete(int rank, int thread, const std::string& name, std::int64_t start,
                           std::int64_t duration, const std::string& args) {
  event("{\"name\":" + quoted(name) + ",\"ph\":\"X\",\"pid\":" + std::to_string(rank) +
        ",\"tid\":" + std::to_string(thread) + ",\"ts\":" + std::to_string(start) + ",\"dur\":" +
        std::to_string(std::max<std::int64_t>(duration, 0)) + ",\"args\":" + args + "}");
}

void TraceWriter::counter(int rank, std::int64_t micros, const std::string& name, double value) {
  event("{\"name\":" + quoted(name) + ",\"ph\":\"C\",\"pid\":" + std::to_string(rank) + ",\"ts\":" +
        std::to_string(micros) + ",\"args\":" + json_text(nlohmann::json{{"value", value}}) + "}");
}

void TraceWriter::add(const records::MetricRecord& r) {
  // The rank's binding is no event: the report's table of ranks shows it.
  if (r.type == records::RecordType::kBinding) return;
  const std::int64_t t = records::unix_seconds_to_micros(r.time);
  latest_ = std::max(latest_, t);
  if (r.type == records::RecordType::kResource) {
    // The CPU share is the interval's average: it holds from the interval's start. The others are
    // readings at the sample's time.
    counter(r.rank, t - records::unix_seconds_to_micros(r.interval), "cpu %", r.cpu_percent);
    counter(r.rank, t, "rss MiB", static_cast<double>(r.rss_bytes) / (1 << 20));
    if (r.gpu) {
      if (r.gpu->util_percent) counter(r.rank, t, "gpu %", *r.gpu->util_percent);
      if (r.gpu->memory_bytes) {
        counter(r.rank, t, "gpu MiB", static_cast<double>(*r.gpu->memory_bytes) / (1 << 20));
      }
      if (r.gpu->power_watts) counter(r.rank, t, "gpu W", *r.gpu->power_watts);
    }
    return;
  }
  if (r.type == records::RecordType::kStep) {
    // A step record is written when the step ends; it lasted `seconds`.
    const std::int64_t duration = records::unix_seconds_to_micros(r.seconds);
    nlohmann::json args = {{"step", r.step}, {"samples", r.samples}, {"seconds", r.seconds}};
    if (r.comm_seconds) args["comm_seconds"] = *r.comm_seconds;
    if (r.data_seconds) args["data_seconds"] = *r.data_seconds;
    complete(r.rank, kStepThread, "step " + std::to_string(r.step), t - duration, duration,
             json_text(args));
    return;
  }
  if (r.type == records::RecordType::kInterval) {
    // An interval record's steps as one slice from the first's start to the record.
    const records::StepInterval& i = r.step_interval;
    const std::int64_t began = records::unix_seconds_to_micros(i.began);
    nlohmann::json args = {{"first_step", i.first_step},
                           {"last_step", i.last_step},
                           {"steps", i.count()},
                           {"samples", i.samples.sum()},
                           {"seconds", i.seconds.sum()},
                           {"p50_seconds", i.seconds.percentile(50)},
                           {"max_seconds", i.seconds.max()},
                           {"comm_seconds", i.comm_seconds.sum()}};
    if (i.data_seconds.count() > 0) args["data_seconds"] = i.data_seconds.sum();
    complete(r.rank, kStepThread,
             "steps " + std::to_string(i.first_step) + "-" + std::to_string(i.last_step), began,
             t - began, json_text(args));
    return;
  }
  auto& open = open_[r.rank];
  if (r.enter) {
    open[r.seq] = Open{t, r.op, r.bytes};
    return;
  }
  auto it = open.find(r.seq);
  if (it == open.end()) return;  // an exit without its enter (the file starts mid-collective)
  const nlohmann::json args = {{"seq", r.seq}, {"bytes", it->second.bytes}};
  complete(r.rank, kCollectiveThread, it->second.op, it->second.at, t - it->second.at,
           json_text(args));
  open.erase(it);
}

void TraceWriter::add_instant(int rank, std::int64_t micros, const std::string& name) {
  latest_ = std::max(latest_, micros);
  event("{\"name\":" + quoted(name) + ",\"ph\":\"i\",\"s\":\"p\",\"pid\":" + std::to_string(rank) +
        ",\"tid\":" + std::to_string(kStepThread) + ",\"ts\":" + std::to_string(micros) + "}");
}

void TraceWriter::finish() {
  for (const auto& [rank, open] : open_) {
    for (const auto& [seq, o] : open) {
      const nlohmann::json args = {{"seq", seq}, {"bytes", o.bytes}, {"never_left", true}};
      complete(rank, kCollectiveThread, o.op + " (never left)", o.at, latest_ - o.at,
               json_text(args));
    }
  }
  open_.clear();
  sink_("\n]}\n");
}

}  // namespace dtrain::report
