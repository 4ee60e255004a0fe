#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <dtrain/dtrain.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {
namespace fs = std::filesystem;

class MeterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("DTRAIN_RUN_DIR");
    unsetenv("DTRAIN_BOOTSTRAP");
    dir_ = fs::temp_directory_path() /
           ("dtrain-meter-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> lines(const fs::path& p) {
    std::ifstream in(p);
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }
  fs::path dir_;
};

TEST_F(MeterTest, WritesOneJsonRecordPerStep) {
  dtrain::Context ctx = dtrain::init();
  {
    dtrain::Meter meter(ctx, dir_.string());
    EXPECT_TRUE(meter.enabled());
    EXPECT_EQ(meter.path(), (dir_ / "rank-00000.jsonl").string());
    meter.record(0, 128, 0.5);
    meter.record(1, 64, 0.25);
    // Buffered: nothing on disk before a flush.
    EXPECT_EQ(fs::file_size(dir_ / "rank-00000.jsonl"), 0u);
  }
  const auto got = lines(dir_ / "rank-00000.jsonl");
  ASSERT_EQ(got.size(), 2u);
  const auto first = nlohmann::json::parse(got[0]);
  EXPECT_EQ(first["v"], 1);
  EXPECT_EQ(first["rank"], 0);
  EXPECT_EQ(first["step"], 0);
  EXPECT_EQ(first["samples"], 128);
  EXPECT_EQ(first["seconds"], 0.5);
  EXPECT_GT(first["time"].get<double>(), 1.7e9);
  const auto second = nlohmann::json::parse(got[1]);
  EXPECT_EQ(second["step"], 1);
  EXPECT_EQ(second["samples"], 64);
  EXPECT_EQ(second["seconds"], 0.25);
  EXPECT_EQ(first.size(), 6u) << "schema v1 has exactly v, time, rank, step, samples, seconds";
}

TEST_F(MeterTest, LargeRunsFlushByThemselves) {
  dtrain::Context ctx = dtrain::init();
  dtrain::Meter meter(ctx, dir_.string());
  for (int i = 0; i < 5000; ++i) meter.record(i, 1, 0.001);
  EXPECT_GT(fs::file_size(dir_ / "rank-00000.jsonl"), 0u);
  meter.flush();
  EXPECT_EQ(lines(dir_ / "rank-00000.jsonl").size(), 5000u);
}

TEST_F(MeterTest, RunDirFromTheEnvironment) {
  setenv("DTRAIN_RUN_DIR", dir_.c_str(), 1);
  dtrain::Context ctx = dtrain::init();
  dtrain::Meter meter(ctx);
  meter.record(3, 10, 1.0);
  meter.flush();
  EXPECT_EQ(lines(dir_ / "rank-00000.jsonl").size(), 1u);
}

TEST_F(MeterTest, DisabledOutsideADtrainJob) {
  dtrain::Context ctx = dtrain::init();
  dtrain::Meter meter(ctx);
  EXPECT_FALSE(meter.enabled());
  meter.record(0, 1, 1.0);
  meter.flush();
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(MeterTest, UnwritableDirectoryIsNamed) {
  dtrain::Context ctx = dtrain::init();
  const std::string missing = (dir_ / "no" / "such" / "dir").string();
  try {
    dtrain::Meter meter(ctx, missing);
    FAIL() << "no error";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(std::string(e.what()), "dtrain: meter: cannot open " + missing +
                                         "/rank-00000.jsonl: No such file or directory");
  }
}

}  // namespace
