// Synthetic collective heartbeats for the report tests (hang, trace, first error).
#pragma once

#include <optional>
#include <string>

#include "records/metric_record.hpp"

namespace dtrain::report::testing {

// A collective heartbeat of `rank` at 2026-11-22T10:00:00Z + t seconds.
inline records::MetricRecord coll(int rank, long long seq, bool enter, double t,
                                  const std::string& op = "allreduce", long long bytes = 4096) {
  records::MetricRecord r;
  r.version = records::kMetricSchemaVersion;
  r.type = records::RecordType::kCollective;
  r.rank = rank;
  r.seq = seq;
  r.enter = enter;
  r.time = 1795341600.0 + t;
  r.op = op;
  r.bytes = bytes;
  return r;
}

// A resource sample of `rank` at 2026-11-22T10:00:00Z + t seconds, covering the `interval` before.
inline records::MetricRecord resource(int rank, double t, double interval, double cpu_percent,
                                      long long rss_bytes,
                                      std::optional<records::GpuSample> gpu = {}) {
  records::MetricRecord r;
  r.version = records::kMetricSchemaVersion;
  r.type = records::RecordType::kResource;
  r.rank = rank;
  r.time = 1795341600.0 + t;
  r.interval = interval;
  r.cpu_percent = cpu_percent;
  r.rss_bytes = rss_bytes;
  r.gpu = gpu;
  return r;
}

}  // namespace dtrain::report::testing
