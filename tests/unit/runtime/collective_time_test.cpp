// The time inside collectives that a step record carries: only the part within the step.
#include "collective_time.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace dtrain::runtime {
namespace {

using std::chrono::milliseconds;

CollectiveTime::TimePoint at(int ms) { return CollectiveTime::TimePoint{} + milliseconds(ms); }

TEST(CollectiveTime, CountsOnlyThePartInsideTheStep) {
  CollectiveTime t;
  t.enter(at(0));  // before the step: a checkpoint's broadcast
  t.exit(at(500));
  t.enter(at(900));  // straddles the start
  t.exit(at(1100));
  t.enter(at(1500));  // inside
  t.exit(at(1600));
  EXPECT_DOUBLE_EQ(t.take(at(1000), at(2000)), 0.2);
  // Taken: the next step starts with nothing.
  EXPECT_DOUBLE_EQ(t.take(at(2000), at(3000)), 0.0);
}

// A loop that times only its compute and then allreduces outside the timed part: the allreduce
// belongs to no step. Summing every collective since the previous record made comm % 518.
TEST(CollectiveTime, CollectivesBetweenTimedStepsBelongToNone) {
  CollectiveTime t;
  for (int step = 0; step < 3; ++step) {
    const int begin = step * 1000;
    t.enter(at(begin + 100));  // after the timed 100 ms of compute
    t.exit(at(begin + 618));
    EXPECT_DOUBLE_EQ(t.take(at(begin + 1000 - 100), at(begin + 1000)), 0.0);
  }
}

TEST(CollectiveTime, ARunningCollectiveCountsUpToTheEndAndTheRestLater) {
  CollectiveTime t;
  t.enter(at(800));
  EXPECT_DOUBLE_EQ(t.take(at(0), at(1000)), 0.2);
  t.exit(at(1300));
  EXPECT_DOUBLE_EQ(t.take(at(1000), at(2000)), 0.3);
}

TEST(CollectiveTime, NeverMoreThanTheStep) {
  CollectiveTime t;
  t.enter(at(0));
  t.exit(at(5000));
  EXPECT_DOUBLE_EQ(t.take(at(1000), at(1100)), 0.1);
  EXPECT_DOUBLE_EQ(t.take(at(2000), at(2000)), 0.0);
  // An exit without an enter (a Meter created mid-collective) adds nothing.
  t.exit(at(2500));
  EXPECT_DOUBLE_EQ(t.take(at(2000), at(3000)), 0.0);
}

TEST(CollectiveTime, KeepsABoundedNumberWithoutRecords) {
  CollectiveTime t;
  const std::size_t n = CollectiveTime::kMaxKept + 10;
  for (std::size_t i = 0; i < n; ++i) {
    t.enter(CollectiveTime::TimePoint{} + milliseconds(2 * i));
    t.exit(CollectiveTime::TimePoint{} + milliseconds(2 * i + 1));
  }
  // The newest are kept: the last 10 collectives lie inside this step.
  const auto begin = CollectiveTime::TimePoint{} + milliseconds(2 * (n - 10));
  EXPECT_NEAR(t.take(begin, begin + milliseconds(100)), 0.010, 1e-12);
}

}  // namespace
}  // namespace dtrain::runtime
