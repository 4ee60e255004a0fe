// The Meter at its default detail (DTRAIN_RECORDS=intervals, docs/metrics.md "Detail"): the first
// steps whole, then one interval record per interval; the heartbeats only as the readers need
// them (the last ones once the collectives stop, and failures), so the file does not grow with
// every collective.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <dtrain/dtrain.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

namespace {
namespace fs = std::filesystem;

std::vector<nlohmann::json> records_of(const fs::path& file, const std::string& type) {
  std::ifstream in(file);
  std::vector<nlohmann::json> out;
  for (std::string l; std::getline(in, l);) {
    auto j = nlohmann::json::parse(l);
    if (j["type"] == type) out.push_back(std::move(j));
  }
  return out;
}

class MeterIntervalsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dtrain-meter-intervals-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path file() const { return dir_ / "rank-00000.jsonl"; }

  fs::path dir_;
  bool no_resource_samples_ = setenv("DTRAIN_RESOURCE_INTERVAL", "0", 1) == 0;
  bool intervals_ = setenv("DTRAIN_RECORDS", "intervals", 1) == 0;
  dtrain::Context ctx_ = dtrain::init();
};

TEST_F(MeterIntervalsTest, TheFirstStepsWholeThenIntervalsAndTheLastHeartbeatsOnly) {
  std::vector<float> x(64, 1.0f);
  {
    dtrain::Meter meter(ctx_, dir_.string());
    for (int s = 0; s < 250; ++s) {
      meter.start_step();
      ctx_.comm().allreduce(std::span<float>(x), dtrain::ReduceOp::kSum);
      meter.end_step(8);
    }
  }
  const auto steps = records_of(file(), "step");
  const auto intervals = records_of(file(), "interval");
  const auto heartbeats = records_of(file(), "coll");
  // The first 20, and any later step 4x the mean (a busy machine may stall one; at most 2).
  ASSERT_GE(steps.size(), 20u);
  ASSERT_LE(steps.size(), 22u);
  EXPECT_EQ(steps[19]["step"], 19);
  const long long stalls = static_cast<long long>(steps.size()) - 20;
  // The other 230 steps in well under 5 s: one interval, written when the Meter closed.
  ASSERT_EQ(intervals.size(), 1u);
  EXPECT_GE(intervals[0]["first_step"], 20);
  EXPECT_LE(intervals[0]["last_step"], 249);
  EXPECT_EQ(intervals[0]["count"], 230 - stalls);
  EXPECT_EQ(intervals[0]["samples"]["sum"], 8.0 * static_cast<double>(230 - stalls));
  EXPECT_EQ(intervals[0]["seconds"]["counts"].size() > 0, true);
  // 250 collectives: the first 200's enter and exit (a rank stopped early leaves its exact
  // collective), then the last enter and exit only, not 500 lines (a refresh pair more if this
  // busy machine took over 10 s).
  ASSERT_GE(heartbeats.size(), 402u);
  ASSERT_LE(heartbeats.size(), 404u);
  for (std::size_t i = 0; i < 400; ++i) {
    EXPECT_EQ(heartbeats[i]["seq"], i / 2) << i;
    EXPECT_EQ(heartbeats[i]["phase"], i % 2 == 0 ? "enter" : "exit") << i;
  }
  const std::size_t n = heartbeats.size();
  EXPECT_EQ(heartbeats[n - 2]["phase"], "enter");
  EXPECT_EQ(heartbeats[n - 1]["phase"], "exit");
  EXPECT_EQ(heartbeats[n - 2]["seq"], 249);
  EXPECT_EQ(heartbeats[n - 1]["seq"], 249);
}

TEST_F(MeterIntervalsTest, TheLastHeartbeatReachesTheFileOnceTheCollectivesStop) {
  dtrain::Meter meter(ctx_, dir_.string());
  std::vector<float> x(4, 1.0f);
  // The first 200 collectives' heartbeats are written as they come (polled: the flusher writes
  // the buffer twice a second).
  for (int i = 0; i < 200; ++i) ctx_.comm().allreduce(std::span<float>(x), dtrain::ReduceOp::kSum);
  std::vector<nlohmann::json> got;
  for (int i = 0; i < 2000 && got.size() < 400; ++i) {
    usleep(10000);
    got = records_of(file(), "coll");
  }
  ASSERT_EQ(got.size(), 400u);
  ctx_.comm().allreduce(std::span<float>(x), dtrain::ReduceOp::kSum);
  EXPECT_EQ(records_of(file(), "coll").size(), 400u);  // not at once: after a quiet spell
  // The flusher writes them once no collective ran for 2 s (polled up to 20 s: not a timing
  // assertion, only whether they ever arrive while the Meter lives).
  for (int i = 0; i < 2000 && got.size() < 402; ++i) {
    usleep(10000);
    got = records_of(file(), "coll");
  }
  ASSERT_EQ(got.size(), 402u);
  EXPECT_EQ(got[400]["op"], "allreduce");
  EXPECT_EQ(got[400]["phase"], "enter");
  EXPECT_EQ(got[400]["seq"], 200);
  EXPECT_EQ(got[401]["phase"], "exit");
}

TEST_F(MeterIntervalsTest, FlushWritesTheOpenIntervalAndTheLastHeartbeats) {
  dtrain::Meter meter(ctx_, dir_.string());
  std::vector<float> x(4, 1.0f);
  for (int s = 0; s < 25; ++s) {
    ctx_.comm().allreduce(std::span<float>(x), dtrain::ReduceOp::kSum);
    meter.record(s, 4, 0.01);
  }
  meter.flush();
  const auto intervals = records_of(file(), "interval");
  ASSERT_EQ(intervals.size(), 1u);
  EXPECT_EQ(intervals[0]["count"], 5);
  // 25 collectives, among the first 200: each one's enter and exit.
  EXPECT_EQ(records_of(file(), "coll").size(), 50u);
  meter.flush();  // nothing open, no heartbeat since: nothing written
  EXPECT_EQ(records_of(file(), "interval").size(), 1u);
  EXPECT_EQ(records_of(file(), "coll").size(), 50u);
}

TEST_F(MeterIntervalsTest, ABadSettingIsRefusedByInitNamingTheVariable) {
  setenv("DTRAIN_RECORDS", "all", 1);
  try {
    dtrain::init();
    ADD_FAILURE() << "no error";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "dtrain: DTRAIN_RECORDS: expected \"intervals\" (a record per interval of steps, the "
              "default) or \"steps\" (a record per step), got \"all\"");
  }
  setenv("DTRAIN_RECORDS", "intervals", 1);
}

}  // namespace
