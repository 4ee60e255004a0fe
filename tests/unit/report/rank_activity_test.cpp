// What a rank does outside its collectives (report/rank_activity.hpp): one sample's reading, the
// tally of the last ones, and the live straggler line's clause.
#include "report/rank_activity.hpp"

#include <gtest/gtest.h>

namespace {

using dtrain::report::Activity;
using dtrain::report::ActivityTally;
using dtrain::report::ProcessSample;
using dtrain::report::sample_activity;

ProcessSample at(char state, double cpu) { return {state, cpu, ""}; }

TEST(RankActivity, ASampleSaysComputingSleepingBlockedOrStopped) {
  // One second apart: 0.9 s of CPU time is computing whatever the main thread's state.
  EXPECT_EQ(sample_activity(at('S', 10), at('S', 10.9), 1.0, false), Activity::kComputing);
  EXPECT_EQ(sample_activity(at('R', 10), at('R', 10.1), 1.0, false), Activity::kComputing);
  // Asleep with 5 % CPU: a sleep, a queue, a lock.
  EXPECT_EQ(sample_activity(at('S', 10), at('S', 10.05), 1.0, false), Activity::kSleeping);
  EXPECT_EQ(sample_activity(at('S', 10), at('D', 10.0), 1.0, false), Activity::kBlocked);
  EXPECT_EQ(sample_activity(at('R', 10), at('T', 10.0), 1.0, false), Activity::kStopped);
  EXPECT_EQ(sample_activity(at('R', 10), at('t', 10.0), 1.0, false), Activity::kStopped);
  // Inside a collective, or exited: nothing said of what it does outside them.
  EXPECT_FALSE(sample_activity(at('S', 10), at('S', 10.0), 1.0, true));
  EXPECT_FALSE(sample_activity(at('S', 10), at('Z', 10.0), 1.0, false));
}

TEST(RankActivity, TheTallyGivesTheMostFrequentOfTheLastSamples) {
  ActivityTally tally;
  EXPECT_EQ(tally.most(), Activity::kUnknown);
  for (int i = 0; i < 30; ++i) tally.add(Activity::kComputing);
  EXPECT_EQ(tally.most(), Activity::kComputing);
  // 11 of the last 20 asleep.
  for (int i = 0; i < 11; ++i) tally.add(Activity::kSleeping);
  EXPECT_EQ(tally.most(), Activity::kSleeping);
  // A tie between computing and asleep reads as asleep.
  ActivityTally half;
  half.add(Activity::kComputing);
  half.add(Activity::kSleeping);
  EXPECT_EQ(half.most(), Activity::kSleeping);
}

TEST(RankActivity, TheClauseAndTheWordForEachActivity) {
  EXPECT_EQ(dtrain::report::activity_text(Activity::kComputing), "it is computing, not waiting");
  EXPECT_EQ(dtrain::report::activity_text(Activity::kSleeping),
            "it is sleeping outside collectives (not computing)");
  EXPECT_EQ(dtrain::report::activity_text(Activity::kBlocked),
            "it is blocked in the kernel (D state) outside collectives (not computing: reading "
            "files?)");
  EXPECT_EQ(dtrain::report::activity_text(Activity::kStopped),
            "it is stopped (SIGSTOP or a debugger)");
  EXPECT_EQ(dtrain::report::activity_text(Activity::kUnknown), "");
  for (const Activity a : {Activity::kComputing, Activity::kSleeping, Activity::kBlocked,
                           Activity::kStopped, Activity::kUnknown}) {
    EXPECT_EQ(dtrain::report::activity_from_word(dtrain::report::activity_word(a)), a);
  }
  EXPECT_EQ(dtrain::report::activity_from_word("dreaming"), Activity::kUnknown);
}

// A rank that computes 0.8 s and sleeps 0.2 s of each second reads as computing in every one-second
// sample; the share of its time off the CPU says what makes it late (torch_ddp_straggler named
// its sleeping rank "computing, not waiting" under load).
TEST(RankActivity, TheShareOnACpuSaysWhetherARunningRankComputes) {
  const auto at = [](double cpu) {
    dtrain::report::ProcessSample s;
    s.state = 'R';
    s.cpu_seconds = cpu;
    return s;
  };
  EXPECT_NEAR(dtrain::report::sample_cpu_share(at(10), at(10.8), 1.0), 0.8, 1e-9);
  EXPECT_DOUBLE_EQ(dtrain::report::sample_cpu_share(at(10), at(12), 1.0), 1.0);  // threads: clamped
  EXPECT_LT(dtrain::report::sample_cpu_share(at(10), at(10), 0.0), 0);
  ActivityTally tally;
  EXPECT_LT(tally.cpu_share(), 0);
  for (int i = 0; i < 25; ++i) tally.add(Activity::kComputing, i < 5 ? 0.0 : 0.8);
  EXPECT_EQ(tally.most(), Activity::kComputing);
  EXPECT_NEAR(tally.cpu_share(), 0.8, 1e-12);  // the last 20 only
  EXPECT_EQ(dtrain::report::activity_text(Activity::kComputing, tally.cpu_share(), 0.98),
            "it is off the CPU 20 % of its time outside collectives, the others 2 % (sleeping, "
            "loading data, or waiting for a lock or a CPU: not computing then)");
  EXPECT_EQ(dtrain::report::activity_text(Activity::kSleeping, 0.97, 0.98),
            "it is computing, not waiting (on a CPU 97 % of its time outside collectives, the "
            "others 98 %)");
  EXPECT_EQ(dtrain::report::activity_text(Activity::kComputing, 0.9),
            "it is computing, not waiting (on a CPU 90 % of its time outside collectives)");
  // Stopped and blocked say so whatever the share.
  EXPECT_EQ(dtrain::report::activity_text(Activity::kStopped, 0.0, 0.98),
            "it is stopped (SIGSTOP or a debugger)");
}

}  // namespace
