// The Meter's resource records (docs/metrics.md, "type":"resource"): written by its background
// thread at DTRAIN_RESOURCE_INTERVAL and once more when it closes, whole lines among the step
// records, covering the Meter's life; and a child forked from a process with a Meter neither hangs
// nor writes its parent's records.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <dtrain/dtrain.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {
namespace fs = std::filesystem;

// Each test sets DTRAIN_RESOURCE_INTERVAL before init() reads it, and 0 again after (the Meter
// tests in this program compare whole files).
class ResourceRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dtrain-resource-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    setenv("DTRAIN_RESOURCE_INTERVAL", "0.02", 1);
    setenv("DTRAIN_RECORDS", "steps", 1);  // these tests count step records among the samples
    ctx_.emplace(dtrain::init());
  }
  void TearDown() override {
    ctx_.reset();
    setenv("DTRAIN_RESOURCE_INTERVAL", "0", 1);
    fs::remove_all(dir_);
  }

  // In the order written: the field order is part of the format.
  std::vector<nlohmann::ordered_json> records(const std::string& type) const {
    std::ifstream in(dir_ / "rank-00000.jsonl");
    std::vector<nlohmann::ordered_json> out;
    for (std::string l; std::getline(in, l);) {
      nlohmann::ordered_json j =
          nlohmann::ordered_json::parse(l);  // throws on a torn or interleaved line
      if (j["type"] == type) out.push_back(std::move(j));
    }
    return out;
  }

  fs::path dir_;
  std::optional<dtrain::Context> ctx_;
};

TEST_F(ResourceRecordsTest, SamplesCoverTheMetersLifeInTheDocumentedFields) {
  const auto before = std::chrono::steady_clock::now();
  {
    dtrain::Meter meter(*ctx_, dir_.string());
    for (int step = 0; step < 30; ++step) {
      meter.start_step();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      meter.end_step(8);
    }
  }
  const double lived =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  EXPECT_EQ(records("step").size(), 30u);
  const std::vector<nlohmann::ordered_json> samples = records("resource");
  // At least one at the interval and the closing one (the thread may be starved on a busy machine,
  // so no more is asked for).
  ASSERT_GE(samples.size(), 2u);
  double covered = 0;
  for (const auto& r : samples) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : r.items()) keys.push_back(key);
    // No GPU readings on a machine without NVIDIA's library; with it, all of them come after.
    EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + 7),
              (std::vector<std::string>{"v", "type", "time", "rank", "interval", "cpu_percent",
                                        "rss_bytes"}))
        << r.dump();
    EXPECT_EQ(r["v"], 2);
    EXPECT_EQ(r["rank"], 0);
    EXPECT_TRUE(r["rss_bytes"].is_number_integer());
    EXPECT_GT(r["rss_bytes"].get<long long>(), 0);
    EXPECT_GE(r["cpu_percent"].get<double>(), 0);
    EXPECT_GT(r["interval"].get<double>(), 0);
    covered += r["interval"].get<double>();
    if (!r.contains("gpu")) {
      EXPECT_EQ(keys.size(), 7u) << "GPU readings without \"gpu\": " << r.dump();
    }
  }
  // The samples' intervals follow one another from the Meter's start to its close.
  EXPECT_LE(covered, lived);
  EXPECT_GE(covered, lived * 0.5) << "lived " << lived << " s";
}

TEST_F(ResourceRecordsTest, IntervalZeroWritesNone) {
  ctx_.reset();
  setenv("DTRAIN_RESOURCE_INTERVAL", "0", 1);
  ctx_.emplace(dtrain::init());
  {
    dtrain::Meter meter(*ctx_, dir_.string());
    meter.record(0, 8, 0.01);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(records("step").size(), 1u);
  EXPECT_EQ(records("resource").size(), 0u);
}

TEST_F(ResourceRecordsTest, ABadIntervalIsRefusedByInit) {
  setenv("DTRAIN_RESOURCE_INTERVAL", "-1", 1);
  try {
    dtrain::Context bad = dtrain::init();
    FAIL() << "no error";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "dtrain: DTRAIN_RESOURCE_INTERVAL: expected seconds between resource samples, 0.01 "
              "to 86400, or 0 for none, got \"-1\"");
  }
}

// A forked child (a data-loader worker) that records, flushes and destroys its copy of the Meter
// wrote the parent's buffered records a second time, and its own, and joined a thread that exists
// only in the parent (glibc lets that return at once; nothing promises it).
TEST_F(ResourceRecordsTest, AForkedChildNeitherHangsNorWritesItsParentsRecords) {
  {
    std::optional<dtrain::Meter> meter(std::in_place, *ctx_, dir_.string());
    meter->record(0, 8, 0.01);  // buffered: the flusher writes it within 0.5 s
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      meter->record(1, 8, 0.01);
      meter->flush();
      meter.reset();
      _exit(0);
    }
    int status = 0;
    pid_t done = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while ((done = waitpid(pid, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (done == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      FAIL() << "the forked child did not finish in 20 s (destroying its Meter hung)";
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  const std::vector<nlohmann::ordered_json> steps = records("step");
  ASSERT_EQ(steps.size(), 1u) << "the parent's step once, none of the child's";
  EXPECT_EQ(steps[0]["step"], 0);
}

}  // namespace
