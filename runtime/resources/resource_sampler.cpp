#include "resources/resource_sampler.hpp"

#include <utility>

#include "resources/process_usage.hpp"

namespace dtrain::runtime {

ResourceSampler::ResourceSampler(GpuChoice gpu)
    : choice_(std::move(gpu)),
      last_(Clock::now()),
      last_cpu_seconds_(read_process_usage().cpu_seconds) {}

void ResourceSampler::sample(records::MetricRecord& r, Clock::time_point now) {
  const ProcessUsage usage = read_process_usage();
  const double wall = std::chrono::duration<double>(now - last_).count();
  r.type = records::RecordType::kResource;
  r.interval = wall > 0 ? wall : 0;
  r.cpu_percent = cpu_percent(last_cpu_seconds_, usage.cpu_seconds, wall);
  r.rss_bytes = usage.rss_bytes.value_or(0);
  last_ = now;
  last_cpu_seconds_ = usage.cpu_seconds;
  if (!gpu_looked_up_) {
    gpu_looked_up_ = true;
    if (!choice_.none()) {
      if (const NvmlApi* nvml = started_nvml()) gpu_ = open_gpu(*nvml, choice_);
    }
  }
  if (gpu_) r.gpu = read_gpu(*gpu_);
}

}  // namespace dtrain::runtime
