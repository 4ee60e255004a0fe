// One resource sample (runtime/resources/resource_sampler.hpp): the time it covers, its CPU share,
// and no GPU fields where NVML is absent (this machine, and every node without the driver).
#include "resources/resource_sampler.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>

#include "resources/gpu_usage.hpp"
#include "resources/nvml_library.hpp"

namespace dtrain::runtime {
namespace {

// Without the driver's library (this machine): no NVML, and samples carry no GPU reading at all.
TEST(Nvml, WithoutTheDriverSamplesHaveNoGpuFields) {
  if (void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(h);
    GTEST_SKIP() << "libnvidia-ml.so.1 is installed here";
  }
  EXPECT_EQ(started_nvml(), nullptr);
  ResourceSampler sampler(choose_rank_gpu("0", 0));
  records::MetricRecord r;
  sampler.sample(r, std::chrono::steady_clock::now());
  EXPECT_EQ(r.type, records::RecordType::kResource);
  EXPECT_FALSE(r.gpu);
  EXPECT_GT(r.rss_bytes, 0);
  EXPECT_GE(r.cpu_percent, 0);
}

// Two samples: the second covers the time since the first, and its CPU share is the time spent.
TEST(ResourceSampler, EachSampleCoversTheTimeSinceThePreviousOne) {
  ResourceSampler sampler(GpuChoice{});
  const auto start = sampler.last();
  const auto until = start + std::chrono::milliseconds(200);
  volatile double x = 0;
  while (std::chrono::steady_clock::now() < until) x = x + 1;
  const auto now = std::chrono::steady_clock::now();
  records::MetricRecord r;
  sampler.sample(r, now);
  EXPECT_DOUBLE_EQ(r.interval, std::chrono::duration<double>(now - start).count());
  // A busy loop on one thread: about one core (loose bounds: the machine is shared).
  EXPECT_GT(r.cpu_percent, 10);
  EXPECT_LT(r.cpu_percent, 400);
  EXPECT_EQ(sampler.last(), now);
}

}  // namespace
}  // namespace dtrain::runtime
