// The resource sampler's parts (runtime/resources/, compiled in: libdtrain hides its internals):
// the resident set read from /proc/self/statm, the CPU share between two readings, which GPU is
// the rank's, and NVML where it is absent (this machine, and every node without the driver).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <dtrain/dtrain.hpp>
#include <string>
#include <vector>

#include "resources/gpu_usage.hpp"
#include "resources/nvml_library.hpp"
#include "resources/process_usage.hpp"
#include "resources/resource_sampler.hpp"

namespace dtrain::runtime {
namespace {

TEST(ProcessUsage, TheResidentSetIsStatmsSecondFieldInPages) {
  EXPECT_EQ(statm_resident_bytes("12345 678 90 1 0 2345 0\n", 4096), 678LL * 4096);
  EXPECT_EQ(statm_resident_bytes("1 2", 65536), 2LL * 65536);
  EXPECT_FALSE(statm_resident_bytes("", 4096));
  EXPECT_FALSE(statm_resident_bytes("12345\n", 4096)) << "one field";
  EXPECT_FALSE(statm_resident_bytes("12345 x 3", 4096));
  EXPECT_FALSE(statm_resident_bytes("12345 -2 3", 4096));
  EXPECT_FALSE(statm_resident_bytes("1 9223372036854775807", 4096)) << "past int64 in bytes";
  EXPECT_FALSE(statm_resident_bytes("1 2", 0));
}

TEST(ProcessUsage, CpuPercentIsCpuTimeOverWallTimeWithOneCoreAt100) {
  EXPECT_DOUBLE_EQ(cpu_percent(10.0, 12.5, 5.0), 50.0);
  EXPECT_DOUBLE_EQ(cpu_percent(10.0, 20.0, 5.0), 200.0) << "two cores busy";
  EXPECT_DOUBLE_EQ(cpu_percent(10.0, 10.0, 5.0), 0.0);
  EXPECT_DOUBLE_EQ(cpu_percent(10.0, 11.0, 0.0), 0.0) << "no time passed";
  EXPECT_DOUBLE_EQ(cpu_percent(10.0, 9.0, 1.0), 0.0) << "a clock that went back";
}

TEST(ProcessUsage, ThisProcessHasAResidentSetAndSpendsCpuTime) {
  const ProcessUsage before = read_process_usage();
  ASSERT_TRUE(before.rss_bytes);
  EXPECT_GT(*before.rss_bytes, 0);
  // Busy for a while: CPU time must grow (getrusage counts microseconds).
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  volatile double x = 0;
  while (std::chrono::steady_clock::now() < until) x = x + 1;
  EXPECT_GT(read_process_usage().cpu_seconds, before.cpu_seconds);
}

TEST(GpuChoice, TheRanksGpuIsTheFirstVisibleDevice) {
  EXPECT_EQ(choose_rank_gpu("3", 0).index, 3);
  EXPECT_EQ(choose_rank_gpu("2,0,1", 1).index, 2) << "own-first: the rank's GPU leads";
  const GpuChoice uuid = choose_rank_gpu("GPU-5f3c1e2a-0000-1111-2222-333344445555,1", 0);
  EXPECT_FALSE(uuid.index);
  EXPECT_EQ(uuid.uuid, "GPU-5f3c1e2a-0000-1111-2222-333344445555");
  EXPECT_EQ(choose_rank_gpu("MIG-abc", 0).uuid, "MIG-abc");
  // Without the variable: the local rank's GPU, as torch.cuda.set_device(local_rank) picks.
  EXPECT_EQ(choose_rank_gpu(std::nullopt, 3).index, 3);
}

TEST(GpuChoice, AVariableNamingNoDeviceMeansNoGpu) {
  for (const char* none : {"", "-1", "NoDevFiles", " 1", "+1", "0x1"}) {
    EXPECT_TRUE(choose_rank_gpu(none, 0).none()) << "CUDA_VISIBLE_DEVICES=\"" << none << "\"";
  }
}

TEST(Nvml, AMissingLibraryIsNamedWithTheLoadersReason) {
  try {
    load_nvml_api({"libdtrain-test-no-such-nvidia-ml.so.1"});
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.code(), Error::Code::kInvalid);
    EXPECT_NE(msg.find("dtrain: nvml: cannot load NVIDIA's management library "
                       "(libdtrain-test-no-such-nvidia-ml.so.1: "),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("cannot open shared object file"), std::string::npos) << msg;
  }
}

TEST(Nvml, ALibraryWithoutNvmlsFunctionsIsRefusedNamingTheFunction) {
  try {
    load_nvml_api({"libz.so.1"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("libz.so.1 has no nvmlInit_v2 ("), std::string::npos)
        << e.what();
  }
}

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
