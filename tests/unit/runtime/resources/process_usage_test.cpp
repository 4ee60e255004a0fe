// The process's readings (runtime/resources/process_usage.hpp, compiled in: libdtrain hides its
// internals): the resident set read from /proc/self/statm and the CPU share between two readings.
#include "resources/process_usage.hpp"

#include <gtest/gtest.h>

#include <chrono>

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

}  // namespace
}  // namespace dtrain::runtime
