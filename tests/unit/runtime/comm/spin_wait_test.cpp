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

// Completes its message at its `complete_at`th step (0: never); records the calls. Its first
// `moving` steps move bytes; `mid`: a message is part-way through (its peer copying the other end).
class FakeProgress final : public Progress {
 public:
  FakeProgress(Pending& p, int complete_at) : p_(p), complete_at_(complete_at) {}
  void begin() override { calls.push_back("begin"); }
  bool step() override {
    ++steps;
    if (steps == complete_at_) p_.done.store(true, std::memory_order_release);
    return steps <= moving;  // after these, no bytes moved: the spin is not renewed
  }
  void end(bool done) override { calls.push_back(done ? "end done" : "end not done"); }
  bool mid_message() const override { return mid; }
  std::vector<std::string> calls;
  int steps = 0;
  int moving = 0;
  bool mid = false;

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

// A message part-way through a ring whose peer pauses (its thread taken off its core) is waited
// for by polling for 20 ms before the waiter sleeps: a sleeper's bytes take a wake-up per lap of
// the ring (64 MiB one way: 1.5-5 x as long on the VM of docs/benchmarks.md). Still bounded.
TEST(SpinWait, AWaiterMidMessagePollsLongerBeforeItSleeps) {
  Pending p;
  FakeProgress progress(p, 0);
  progress.moving = 3;
  progress.mid = true;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(spin_on(p, progress));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
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
