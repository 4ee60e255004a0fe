#include "affinity/process_binding.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
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

TEST(ProcessBinding, AllThreadsIncludesThoseStartedBefore) {
  const CpuSet before = current_cpu_affinity();
  ASSERT_FALSE(before.empty());
  const CpuSet one{before.last()};
  std::mutex m;
  std::condition_variable cv;
  bool go = false;
  CpuSet seen_by_other;
  // Started before the binding, like PMIx's or MPI's threads before init() applies its entry.
  std::thread other([&] {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return go; });
    seen_by_other = current_cpu_affinity();
  });
  bind_all_threads(one);
  const CpuSet seen_here = current_cpu_affinity();
  {
    std::lock_guard<std::mutex> lock(m);
    go = true;
  }
  cv.notify_all();
  other.join();
  bind_all_threads(before);  // the rest of the suite runs where it started
  EXPECT_EQ(seen_here, one);
  EXPECT_EQ(seen_by_other, one);
  EXPECT_EQ(current_cpu_affinity(), before);
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
