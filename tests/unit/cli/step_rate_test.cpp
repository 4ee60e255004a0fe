// `dtrain submit --wait`'s steps per second (cli/step_rate.hpp) over a metric file written as the
// Meter writes it: step records, interval records counted by their steps, partial and damaged
// lines.
#include "step_rate.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "../support/scratch_dir.hpp"
#include "records/metric_record.hpp"

namespace dtrain::cli {
namespace {

std::string step_line(long long step, double time) {
  records::MetricRecord r;
  r.version = 2;
  r.type = records::RecordType::kStep;
  r.time = time;
  r.step = step;
  r.samples = 32;
  r.seconds = 0.5;
  return records::format_step_record(r) + "\n";
}

// Steps first..last together, closed at `time`.
std::string interval_line(long long first, long long last, double time) {
  records::MetricRecord r;
  r.version = 2;
  r.type = records::RecordType::kInterval;
  r.time = time;
  records::StepInterval& i = r.step_interval;
  i.first_step = first;
  i.last_step = last;
  i.began = time - 1;
  const long long n = last - first + 1;
  i.samples.add(32, n);
  i.seconds.add(0.5, n);
  i.comm_seconds.add(0, n);
  return records::format_interval_record(r) + "\n";
}

class StepRateTest : public test_support::ScratchDirTest {
 protected:
  StepRateTest() : ScratchDirTest("dtrain-step-rate-") {}
  void append(const std::string& text) {
    std::ofstream(file(), std::ios::app | std::ios::binary) << text;
  }
  std::string file() const { return (dir_ / "rank-00000.jsonl").string(); }
};

TEST_F(StepRateTest, StepRecordsGiveStepsOverTheirTimeAndNothingBeforeTwo) {
  StepRate rate(file());
  EXPECT_FALSE(rate.update()) << "no file yet";
  append(step_line(1, 100));
  EXPECT_FALSE(rate.update()) << "one record spans no time";
  for (int n = 2; n <= 11; ++n) append(step_line(n, 100 + (n - 1) * 0.5));
  const auto r = rate.update();
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(*r, 2.0) << "10 steps in 5 s";
}

TEST_F(StepRateTest, AnIntervalRecordCountsEveryStepItHolds) {
  StepRate rate(file());
  append(step_line(1, 100) + step_line(2, 101));
  // Steps 3-12 closed at 106: 11 steps from the first record's time, over 6 s.
  append(interval_line(3, 12, 106));
  const auto r = rate.update();
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(*r, 11.0 / 6.0);
}

TEST_F(StepRateTest, APartialLineWaitsAndADamagedOneIsPassedOver) {
  StepRate rate(file());
  const std::string second = step_line(2, 104);
  append(step_line(1, 100) + "{\"v\":2,\"type\":\"step\",\"time\":\"soon\"}\n" +
         second.substr(0, 10));
  EXPECT_FALSE(rate.update()) << "the damaged line is no record, the partial one not yet read";
  append(second.substr(10));
  const auto r = rate.update();
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(*r, 0.25) << "1 step in 4 s";
}

}  // namespace
}  // namespace dtrain::cli
