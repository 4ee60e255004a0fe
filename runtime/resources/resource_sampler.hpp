// One rank's resource use between samples (docs/metrics.md, "type":"resource"): CPU time over wall
// time, the resident set, and the rank's GPU through NVML where the library is. Used by the
// Meter's background thread only (meter.cpp), never by the training thread: NVML starts there on
// the first sample, and its calls (an ioctl to the driver each) stay off the step.
#pragma once

#include <chrono>
#include <optional>

#include "records/metric_record.hpp"
#include "resources/gpu_usage.hpp"

namespace dtrain::runtime {

class ResourceSampler {
 public:
  using Clock = std::chrono::steady_clock;

  // Takes the first reading now: the first sample covers the time from here.
  explicit ResourceSampler(GpuChoice gpu);

  // Fills `r`'s resource fields (interval, cpu_percent, rss_bytes, gpu) with the use since the
  // previous sample and starts the next interval at `now`. A process whose resident set cannot
  // be read gets 0 there.
  void sample(records::MetricRecord& r, Clock::time_point now);

  Clock::time_point last() const { return last_; }

 private:
  GpuChoice choice_;
  bool gpu_looked_up_ = false;  // NVML is started on the first sample, not in the constructor
  std::optional<NvmlGpu> gpu_;
  Clock::time_point last_;
  double last_cpu_seconds_ = 0;
};

}  // namespace dtrain::runtime
