// The interval accumulator: which steps stay whole, when an interval closes, and what it holds.
#include "records/step_interval.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "records/record_detail.hpp"

namespace dtrain::records {
namespace {

StepMeasure step(long long n, double seconds, double ended, double comm = 0) {
  return StepMeasure{n, 32, seconds, comm, std::nullopt, ended};
}

TEST(IntervalAccumulator, TheFirstStepsStayWholeThenIntervalsCloseAtTheirStepCount) {
  IntervalAccumulator acc;  // 20 whole, then 100 steps (at least 5 s) or 60 s
  double t = 1000;
  std::vector<StepInterval> closed;
  int full = 0;
  for (long long n = 0; n < 320; ++n) {
    t += 0.1;
    const auto added = acc.add(step(n, 0.1, t, 0.25));
    full += added.full ? 1 : 0;
    EXPECT_FALSE(added.closed);
    if (auto due = acc.take_due(t)) closed.push_back(*due);
  }
  EXPECT_EQ(full, 20);
  ASSERT_EQ(closed.size(), 3u);
  EXPECT_EQ(closed[0].first_step, 20);
  EXPECT_EQ(closed[0].last_step, 119);
  EXPECT_EQ(closed[0].count(), 100);
  EXPECT_NEAR(closed[0].began, 1000 + 2.0, 1e-9);
  EXPECT_EQ(closed[2].last_step, 319);
  EXPECT_EQ(closed[0].samples.sum(), 3200);
  // comm_seconds capped at the step's seconds, as the readers count it.
  EXPECT_NEAR(closed[0].comm_seconds.sum(), 10.0, 1e-9);
  EXPECT_EQ(closed[0].data_seconds.count(), 0);
  EXPECT_FALSE(acc.take());
}

TEST(IntervalAccumulator, FastStepsCloseNoSoonerThanMinSecondsAndSlowOnesAtMaxSeconds) {
  IntervalAccumulator fast(IntervalPolicy{100, 5, 60, 0, 4, 2});
  double t = 0;
  long long n = 0;
  for (; n < 1000; ++n) {
    t += 0.001;
    fast.add(step(n, 0.001, t));
    ASSERT_FALSE(fast.take_due(t)) << n;  // 1,000 steps of 1 ms: 1 s, below min_seconds
  }
  EXPECT_EQ(fast.take_due(5.0)->count(), 1000);
  IntervalAccumulator slow(IntervalPolicy{100, 5, 60, 0, 4, 2});
  slow.add(step(0, 30, 30));
  EXPECT_FALSE(slow.take_due(59));
  const auto due = slow.take_due(60);  // no step ended: a hang's steps still reach the file
  ASSERT_TRUE(due);
  EXPECT_EQ(due->count(), 1);
}

TEST(IntervalAccumulator, ASlowStepStaysWholeAtMostTwicePerInterval) {
  IntervalAccumulator acc(IntervalPolicy{100, 0, 60, 5, 4, 2});
  double t = 0;
  for (long long n = 0; n < 10; ++n) acc.add(step(n, 0.1, t += 0.1));
  EXPECT_TRUE(acc.add(step(10, 1.0, t += 1)).full);
  EXPECT_TRUE(acc.add(step(11, 1.0, t += 1)).full);
  EXPECT_FALSE(acc.add(step(12, 5.0, t += 5)).full);  // the third in this interval joins it
  const auto i = acc.take();
  ASSERT_TRUE(i);
  EXPECT_EQ(i->first_step, 5);
  EXPECT_EQ(i->last_step, 12);
  EXPECT_EQ(i->count(), 6);  // 5..9 and 12: 10 and 11 were written whole
  EXPECT_EQ(i->seconds.max(), 5.0);
  EXPECT_TRUE(acc.add(step(13, 10.0, t += 10)).full);  // a new interval may have its own
}

TEST(IntervalAccumulator, AStepNumberThatGoesBackStartsANewInterval) {
  IntervalAccumulator acc(IntervalPolicy{100, 5, 60, 0, 4, 2});
  acc.add(step(40, 0.1, 1));
  acc.add(step(41, 0.1, 2));
  const auto added = acc.add(step(30, 0.1, 3));  // resumed from the checkpoint of step 29
  ASSERT_TRUE(added.closed);
  EXPECT_EQ(added.closed->first_step, 40);
  EXPECT_EQ(added.closed->last_step, 41);
  EXPECT_EQ(acc.take()->first_step, 30);
}

TEST(IntervalAccumulator, DataSecondsOnlyOfTheStepsThatReportedThem) {
  IntervalAccumulator acc(IntervalPolicy{100, 5, 60, 0, 4, 2});
  acc.add(StepMeasure{0, 8, 0.2, 0, 0.05, 1});
  acc.add(StepMeasure{1, 8, 0.2, 0, std::nullopt, 2});
  const auto i = acc.take();
  EXPECT_EQ(i->data_seconds.count(), 1);
  EXPECT_EQ(i->data_seconds.sum(), 0.05);
}

TEST(RecordDetail, OneDefinitionOfTheSetting) {
  EXPECT_EQ(parse_record_detail("intervals"), RecordDetail::kIntervals);
  EXPECT_EQ(parse_record_detail("steps"), RecordDetail::kSteps);
  EXPECT_FALSE(parse_record_detail("step"));
  EXPECT_FALSE(parse_record_detail(""));
  EXPECT_EQ(record_detail_name(RecordDetail::kSteps), "steps");
  EXPECT_EQ(kDefaultRecordDetail, RecordDetail::kIntervals);
}

}  // namespace
}  // namespace dtrain::records
