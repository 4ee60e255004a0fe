// The waiter of a message it moves itself (spin_wait.hpp): it steps its progress until the
// message completes and says so, and when nothing comes it stops spinning (bounded) and says
// that, so that its caller sleeps instead of burning the core for ever.
#include "comm/spin_wait.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <string>
#include <thread>
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

// An engine polls before it sleeps unless the process may run on one CPU only (a launcher bound
// the rank to a core): checked on a thread bound to one CPU, as such a rank's threads are.
TEST(EngineSpin, PollsUnlessTheProcessHasOneCpu) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  ASSERT_EQ(sched_getaffinity(0, sizeof cpus, &cpus), 0);
  EXPECT_EQ(dtrain::runtime::engine_spin(),
            CPU_COUNT(&cpus) >= 2 ? std::chrono::microseconds(100) : std::chrono::microseconds(0));
  std::chrono::microseconds bound{-1};
  std::thread([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &cpus)) {
        CPU_SET(c, &one);
        break;
      }
    }
    if (sched_setaffinity(0, sizeof one, &one) == 0) bound = dtrain::runtime::engine_spin();
  }).join();
  EXPECT_EQ(bound, std::chrono::microseconds(0));
}

}  // namespace
