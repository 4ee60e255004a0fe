#include "affinity/process_binding.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

namespace dtrain::affinity {
namespace {

TEST(ProcessBinding, BindsAndReadsBackInAThread) {
  // In a thread of its own, so the test process keeps its mask.
  std::thread([] {
    const CpuSet before = current_cpu_affinity();
    ASSERT_FALSE(before.empty());
    const CpuSet one{before.first()};
    bind_this_process(one);
    EXPECT_EQ(current_cpu_affinity(), one);
    bind_this_process(before);
    EXPECT_EQ(current_cpu_affinity(), before);
  }).join();
}

TEST(ProcessBinding, RefusalNamesTheCpuset) {
  std::thread([] {
    try {
      bind_this_process(CpuSet{4000});  // no such CPU
      FAIL() << "no error";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "dtrain: bind: sched_setaffinity(4000): Invalid argument");
    }
  }).join();
}

}  // namespace
}  // namespace dtrain::affinity
