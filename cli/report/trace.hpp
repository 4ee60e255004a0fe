// `dtrain timeline`: every rank's steps and collectives on one time axis, as a Chrome trace
// (the JSON object format with "traceEvents" that chrome://tracing and ui.perfetto.dev open).
// One process per rank ("rank 3 (node01)") with two threads: steps, and collectives. A collective
// a rank entered and never left runs to the end of the trace and is named "... (never left)".
// Resource samples become counters of the rank's process: "cpu %", "rss MiB", and with a GPU
// "gpu %", "gpu MiB" and "gpu W".
// Streams: events go to the sink as they are made, so a trace of any size needs little memory.
// Bounded (TraceLimits): a time window, and at most a number of events per rank, the rank's last
// ones (a 1,024-rank x 50,000-step run at full detail made a 17.5 GB trace that no viewer opens;
// the records come rank after rank, so only the current rank's last events are held).
// Pure: the command supplies the records and writes what the sink receives.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/metric_record.hpp"

namespace dtrain::report {

struct TraceLimits {
  // Events that end before `since` or begin after `until` (microseconds since the epoch) are left
  // out; a collective or step that crosses an edge is kept whole.
  std::optional<std::int64_t> since, until;
  // Each rank's last `per_rank` events in the window (steps, collectives, counters); 0: all. The
  // metadata (names of ranks and threads) and the exit markers are always written.
  std::size_t per_rank = 0;
};

class TraceWriter {
 public:
  using Sink = std::function<void(std::string_view)>;
  explicit TraceWriter(Sink sink, TraceLimits limits = {});

  void add_rank(int rank, const std::string& host);
  void add(const records::MetricRecord& record);
  // A moment on a rank's step thread, such as run-rank's exit line.
  void add_instant(int rank, std::int64_t micros, const std::string& name);
  // Closes collectives still open (at the latest time seen) and the JSON document.
  void finish();

  long long events() const { return events_; }
  // Events of the window left out by TraceLimits::per_rank (the ranks' earliest).
  long long left_out() const { return left_out_; }
  // Events outside the window.
  long long outside_window() const { return outside_; }

 private:
  struct Open {
    std::int64_t at = 0;
    std::string op;
    long long bytes = 0;
  };
  // A step, a collective or a counter, kept until written: compact, so a rank's last events can
  // be held, and formatted only when written.
  struct Pending {
    enum class Kind : unsigned char { kStep, kSlice, kCollective, kCounter } kind = Kind::kStep;
    int rank = 0;
    std::int64_t start = 0;
    std::int64_t duration = 0;
    std::string name;                 // a slice's, a collective's operation, a counter's
    std::string args;                 // a slice's, formatted
    long long step = 0, samples = 0;  // a step's
    double seconds = 0;
    std::optional<double> comm, data;
    long long seq = 0, bytes = 0;  // a collective's
    double value = 0;              // a counter's
  };
  bool outside(std::int64_t start, std::int64_t end) const;
  void event(const std::string& json);
  void add_event(Pending p);
  void write(const Pending& p);
  void flush_rank();
  void counter(int rank, std::int64_t micros, const std::string& name, double value);
  void complete(int rank, int thread, const std::string& name, std::int64_t start,
                std::int64_t duration, const std::string& args);

  Sink sink_;
  TraceLimits limits_;
  long long events_ = 0;
  long long left_out_ = 0;
  long long outside_ = 0;
  std::int64_t latest_ = 0;
  std::map<int, std::map<long long, Open>> open_;  // rank -> seq -> enter
  // With a per-rank limit: the current rank's last events, a ring (oldest at ring_next_ once
  // full).
  std::vector<Pending> ring_;
  std::size_t ring_next_ = 0;
  int ring_rank_ = -1;
};

}  // namespace dtrain::report
