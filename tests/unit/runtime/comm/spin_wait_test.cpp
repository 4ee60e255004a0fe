// The waiter of a message it moves itself (spin_wait.hpp): it steps its progress until the
// message completes and says so, and when nothing comes it stops spinning (bounded) and says
// that, so that its caller sleeps instead of burning the core for ever.
#include "comm/spin_wait.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <string>
#include <vector>

#include "comm/engine.hpp"

namespace {

using dtrain::runtime::Pending;
using dtrain::runtime::Progress;
using dtrain::runtime::spin_on;

// Completes its message at its `complete_at`th step (0: never); records the calls.
class FakeProgress final : public Progress {
 public:
  FakeProgress(Pending& p, int complete_at) : p_(p), complete_at_(complete_at) {}
  void begin() override { calls.push_back("begin"); }
  bool step() override {
    ++steps;
    if (steps == complete_at_) p_.done.store(true, std::memory_order_release);
    return false;  // no bytes moved: the spin is not renewed
  }
  void end(bool done) override { calls.push_back(done ? "end done" : "end not done"); }
  std::vector<std::string> calls;
  int steps = 0;

 private:
  Pending& p_;
  int complete_at_;
};

TEST(SpinWait, AMessageThatCompletesWhileItsWaiterStepsIsSeenDone) {
  Pending p;
  FakeProgress progress(p, 50);
  EXPECT_TRUE(spin_on(p, progress));
  EXPECT_EQ(progress.steps, 50);
  EXPECT_EQ(progress.calls, (std::vector<std::string>{"begin", "end done"}));
}

TEST(SpinWait, AWaiterForAMessageThatNeverComesStopsSpinningAndSaysSo) {
  Pending p;
  FakeProgress progress(p, 0);
  EXPECT_FALSE(spin_on(p, progress));  // returns at all: the spin is bounded
  EXPECT_GT(progress.steps, 0);
  EXPECT_EQ(progress.calls, (std::vector<std::string>{"begin", "end not done"}));
}

TEST(SpinWait, AMessageAlreadyCompleteIsNotStepped) {
  Pending p;
  p.done.store(true);
  FakeProgress progress(p, 0);
  EXPECT_TRUE(spin_on(p, progress));
  EXPECT_EQ(progress.steps, 0);
}

// An engine polls only where its node's ranks have a CPU each to poll on: with more ranks on the
// node than CPUs this process may use (1,024 emulated ranks on 2 cores), or one CPU, it sleeps at
// once, giving the core to the rank it waits for.
TEST(EngineSpin, PollsOnlyWhereTheNodesRanksHaveACpuEach) {
  using dtrain::runtime::engine_spin;
  using dtrain::runtime::set_node_ranks;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  ASSERT_EQ(sched_getaffinity(0, sizeof cpus, &cpus), 0);
  const int usable = CPU_COUNT(&cpus);
  set_node_ranks(usable);
  EXPECT_EQ(engine_spin(),
            usable >= 2 ? std::chrono::microseconds(100) : std::chrono::microseconds(0));
  EXPECT_FALSE(dtrain::runtime::node_oversubscribed());
  set_node_ranks(usable + 1);
  EXPECT_EQ(engine_spin(), std::chrono::microseconds(0));
  EXPECT_TRUE(dtrain::runtime::node_oversubscribed());
  set_node_ranks(1);  // as a single process's init() leaves it
  EXPECT_EQ(engine_spin(),
            usable >= 2 ? std::chrono::microseconds(100) : std::chrono::microseconds(0));
}

}  // namespace
