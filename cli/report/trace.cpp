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

TraceWriter::TraceWriter(Sink sink, TraceLimits limits) : sink_(std::move(sink)), limits_(limits) {
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
  Pending p;
  p.kind = Pending::Kind::kCounter;
  p.rank = rank;
  p.start = micros;
  p.name = name;
  p.value = value;
  add_event(std::move(p));
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
    Pending p;
    p.kind = Pending::Kind::kStep;
    p.rank = r.rank;
    p.duration = records::unix_seconds_to_micros(r.seconds);
    p.start = t - p.duration;
    p.step = r.step;
    p.samples = r.samples;
    p.seconds = r.seconds;
    p.comm = r.comm_seconds;
    p.data = r.data_seconds;
    add_event(std::move(p));
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
    Pending p;
    p.kind = Pending::Kind::kSlice;
    p.rank = r.rank;
    p.start = began;
    p.duration = t - began;
    p.name = "steps " + std::to_string(i.first_step) + "-" + std::to_string(i.last_step);
    p.args = json_text(args);
    add_event(std::move(p));
    return;
  }
  auto& open = open_[r.rank];
  if (r.enter) {
    open[r.seq] = Open{t, r.op, r.bytes};
    return;
  }
  auto it = open.find(r.seq);
  if (it == open.end()) return;  // an exit without its enter (the file starts mid-collective)
  Pending p;
  p.kind = Pending::Kind::kCollective;
  p.rank = r.rank;
  p.start = it->second.at;
  p.duration = t - it->second.at;
  p.name = std::move(it->second.op);
  p.seq = r.seq;
  p.bytes = it->second.bytes;
  add_event(std::move(p));
  open.erase(it);
}

bool TraceWriter::outside(std::int64_t start, std::int64_t end) const {
  return (limits_.since && end < *limits_.since) || (limits_.until && start > *limits_.until);
}

void TraceWriter::add_event(Pending p) {
  if (outside(p.start, p.start + std::max<std::int64_t>(p.duration, 0))) {
    ++outside_;
    return;
  }
  if (limits_.per_rank == 0) {
    write(p);
    return;
  }
  if (p.rank != ring_rank_) {
    flush_rank();
    ring_rank_ = p.rank;
  }
  if (ring_.size() < limits_.per_rank) {
    ring_.push_back(std::move(p));
    return;
  }
  ring_[ring_next_] = std::move(p);  // the rank's oldest event gives way
  ring_next_ = (ring_next_ + 1) % ring_.size();
  ++left_out_;
}

void TraceWriter::flush_rank() {
  for (std::size_t k = 0; k < ring_.size(); ++k) write(ring_[(ring_next_ + k) % ring_.size()]);
  ring_.clear();
  ring_next_ = 0;
}

void TraceWriter::write(const Pending& p) {
  switch (p.kind) {
    case Pending::Kind::kStep: {
      nlohmann::json args = {{"step", p.step}, {"samples", p.samples}, {"seconds", p.seconds}};
      if (p.comm) args["comm_seconds"] = *p.comm;
      if (p.data) args["data_seconds"] = *p.data;
      complete(p.rank, kStepThread, "step " + std::to_string(p.step), p.start, p.duration,
               json_text(args));
      return;
    }
    case Pending::Kind::kSlice:
      complete(p.rank, kStepThread, p.name, p.start, p.duration, p.args);
      return;
    case Pending::Kind::kCollective:
      complete(p.rank, kCollectiveThread, p.name, p.start, p.duration,
               json_text(nlohmann::json{{"seq", p.seq}, {"bytes", p.bytes}}));
      return;
    case Pending::Kind::kCounter:
      event("{\"name\":" + quoted(p.name) + ",\"ph\":\"C\",\"pid\":" + std::to_string(p.rank) +
            ",\"ts\":" + std::to_string(p.start) +
            ",\"args\":" + json_text(nlohmann::json{{"value", p.value}}) + "}");
      return;
  }
}

void TraceWriter::add_instant(int rank, std::int64_t micros, const std::string& name) {
  flush_rank();
  latest_ = std::max(latest_, micros);
  event("{\"name\":" + quoted(name) + ",\"ph\":\"i\",\"s\":\"p\",\"pid\":" + std::to_string(rank) +
        ",\"tid\":" + std::to_string(kStepThread) + ",\"ts\":" + std::to_string(micros) + "}");
}

void TraceWriter::finish() {
  flush_rank();
  for (const auto& [rank, open] : open_) {
    for (const auto& [seq, o] : open) {
      if (outside(o.at, latest_)) {  // one begun after --until
        ++outside_;
        continue;
      }
      const nlohmann::json args = {{"seq", seq}, {"bytes", o.bytes}, {"never_left", true}};
      complete(rank, kCollectiveThread, o.op + " (never left)", o.at, latest_ - o.at,
               json_text(args));
    }
  }
  open_.clear();
  sink_("\n]}\n");
}

}  // namespace dtrain::report
