// `dtrain timeline`: every rank's steps and collectives on one time axis, as a Chrome trace
// (the JSON object format with "traceEvents" that chrome://tracing and ui.perfetto.dev open).
// One process per rank ("rank 3 (node01)") with two threads: steps, and collectives. A collective
// a rank entered and never left runs to the end of the trace and is named "... (never left)".
// Resource samples become counters of the rank's process: "cpu %", "rss MiB", and with a GPU
// "gpu %", "gpu MiB" and "gpu W".
// Streams: events go to the sink as they are made, so a trace of any size needs little memory.
// Pure: the command supplies the records and writes what the sink receives.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "records/metric_record.hpp"

namespace dtrain::report {

class TraceWriter {
 public:
  using Sink = std::function<void(std::string_view)>;
  explicit TraceWriter(Sink sink);

  void add_rank(int rank, const std::string& host);
  void add(const records::MetricRecord& record);
  // A moment on a rank's step thread, such as run-rank's exit line.
  void add_instant(int rank, std::int64_t micros, const std::string& name);
  // Closes collectives still open (at the latest time seen) and the JSON document.
  void finish();

  long long events() const { return events_; }

 private:
  struct Open {
    std::int64_t at = 0;
    std::string op;
    long long bytes = 0;
  };
  void event(const std::string& json);
  void counter(int rank, std::int64_t micros, const std::string& name, double value);
  void complete(int rank, int thread, const std::string& name, std::int64_t start,
                std::int64_t duration, const std::string& args);

  Sink sink_;
  long long events_ = 0;
  std::int64_t latest_ = 0;
  std::map<int, std::map<long long, Open>> open_;  // rank -> seq -> enter
};

}  // namespace dtrain::report
