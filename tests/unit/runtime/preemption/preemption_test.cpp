// dtrain::Preemption in one process: a signal becomes should_stop(), handlers come back after,
// DTRAIN_PREEMPT_SIGNALS is parsed strictly. The cross-rank agreement is tested under real
// launchers in tests/integration/checkpoint.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <dtrain/dtrain.h>
#include <dtrain/dtrain.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace {

// The C ABI's copy of the requeue status must be the C++ one: job scripts test for one number.
static_assert(dtrain::kExitRequeue == DTRAIN_EXIT_REQUEUE,
              "DTRAIN_EXIT_REQUEUE (dtrain.h) differs from dtrain::kExitRequeue (preemption.hpp)");

// ctest removes the launcher variables and DTRAIN_PREEMPT_SIGNALS (CMakeLists.txt). init() reads
// DTRAIN_PREEMPT_SIGNALS, so the Context is made on first use: after a test has set it.
class PreemptionTest : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("DTRAIN_PREEMPT_SIGNALS"); }
  dtrain::Context& ctx() {
    if (!ctx_) ctx_.emplace(dtrain::init());
    return *ctx_;
  }

 private:
  std::optional<dtrain::Context> ctx_;
};

std::string error_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
    return e.what();
  }
  return "no error";
}

TEST_F(PreemptionTest, ASignalMakesShouldStopTrue) {
  dtrain::Preemption p(ctx());
  EXPECT_EQ(p.signals(), (std::vector<int>{SIGUSR1, SIGTERM}));
  EXPECT_FALSE(p.should_stop());
  EXPECT_FALSE(p.requested());
  ASSERT_EQ(raise(SIGUSR1), 0);  // would end the process without the handler
  EXPECT_TRUE(p.requested());
  EXPECT_EQ(p.signal_received(), SIGUSR1);
  raise(SIGTERM);
  EXPECT_EQ(p.signal_received(), SIGUSR1) << "the first signal is kept";
  EXPECT_TRUE(p.should_stop());
}

TEST_F(PreemptionTest, HandlersAreRestoredAndANewOneStartsClean) {
  struct sigaction before {};
  sigaction(SIGUSR2, nullptr, &before);
  {
    dtrain::Preemption p(ctx(), {SIGUSR2});
    raise(SIGUSR2);
    EXPECT_TRUE(p.should_stop());
    EXPECT_EQ(error_text([&] { dtrain::Preemption second(ctx(), {SIGUSR1}); }),
              "dtrain: preemption: another Preemption is alive in this process; expected one at "
              "a time (the signal handlers are process-wide)");
  }
  struct sigaction after {};
  sigaction(SIGUSR2, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
  dtrain::Preemption fresh(ctx(), {SIGUSR2});
  EXPECT_FALSE(fresh.should_stop());
}

TEST_F(PreemptionTest, EnvironmentChoosesTheSignals) {
  setenv("DTRAIN_PREEMPT_SIGNALS", "SIGUSR2,TERM,XCPU", 1);
  dtrain::Preemption p(ctx());
  EXPECT_EQ(p.signals(), (std::vector<int>{SIGUSR2, SIGTERM, SIGXCPU}));
}

TEST_F(PreemptionTest, BadSignalsAreNamed) {
  setenv("DTRAIN_PREEMPT_SIGNALS", "USR1,KILL", 1);
  EXPECT_EQ(error_text([] { dtrain::init(); }),
            "dtrain: preemption: DTRAIN_PREEMPT_SIGNALS: unknown signal \"KILL\"; expected "
            "comma-separated names among USR1, USR2, TERM, INT, HUP, QUIT, XCPU, URG, got "
            "\"USR1,KILL\"");
  unsetenv("DTRAIN_PREEMPT_SIGNALS");
  EXPECT_EQ(error_text([&] { dtrain::Preemption p(ctx(), {SIGKILL}); }),
            "dtrain: preemption: signal 9; expected a catchable signal such as SIGUSR1");
  EXPECT_EQ(error_text([&] { dtrain::Preemption p(ctx(), {}); }),
            "dtrain: preemption: signals; expected at least one signal, got none");
  EXPECT_EQ(error_text([] { dtrain::signal_from_name("usr1"); }),
            "dtrain: preemption: signal; expected one of USR1, USR2, TERM, INT, HUP, QUIT, XCPU, "
            "URG, got \"usr1\"");
  EXPECT_EQ(dtrain::signal_from_name("SIGUSR1"), SIGUSR1);
}

}  // namespace
