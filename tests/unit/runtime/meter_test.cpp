// The Meter's file: its name, its exact bytes, each field read back, buffering, and its errors.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <dtrain/dtrain.hpp>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace {
namespace fs = std::filesystem;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class MeterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"PMIX_NAMESPACE", "PMIX_RANK", "DTRAIN_BOOTSTRAP", "DTRAIN_RUN_DIR"}) {
      unsetenv(v);
    }
    dir_ = fs::temp_directory_path() /
           ("dtrain-meter-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    unsetenv("DTRAIN_RUN_DIR");
    fs::remove_all(dir_);
  }

  fs::path file() const { return dir_ / "rank-00000.jsonl"; }

  std::vector<std::string> lines() const {
    std::ifstream in(file());
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }

  std::string meter_error(const std::string& run_dir) {
    try {
      dtrain::Meter meter(ctx_, run_dir);
    } catch (const dtrain::Error& e) {
      EXPECT_EQ(e.code(), dtrain::Error::Code::kSystem);
      return e.what();
    }
    ADD_FAILURE() << "no error for " << run_dir;
    return "";
  }

  fs::path dir_;
  dtrain::Context ctx_ = dtrain::init();
};

TEST_F(MeterTest, WritesTheDocumentedBytes) {
  const double before = unix_now();
  {
    dtrain::Meter meter(ctx_, dir_.string());
    EXPECT_TRUE(meter.enabled());
    EXPECT_EQ(meter.path(), file().string());
    meter.record(0, 128, 0.5);
    meter.record(1, 64, 0.25);
  }
  const double after = unix_now();
  const std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 2u);
  // Everything but the clock is fixed: field order, spelling, no spaces, shortest numbers.
  const std::regex line0(
      R"(\{"v":1,"time":([0-9]+\.[0-9]+),"rank":0,"step":0,"samples":128,"seconds":0\.5\})");
  const std::regex line1(
      R"(\{"v":1,"time":([0-9]+\.[0-9]+),"rank":0,"step":1,"samples":64,"seconds":0\.25\})");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(got[0], m, line0)) << got[0];
  const double t0 = std::stod(m[1].str());
  ASSERT_TRUE(std::regex_match(got[1], m, line1)) << got[1];
  const double t1 = std::stod(m[1].str());
  EXPECT_LE(before, t0);
  EXPECT_LE(t0, t1);
  EXPECT_LE(t1, after);
}

TEST_F(MeterTest, EachFieldReadsBackWithItsType) {
  {
    dtrain::Meter meter(ctx_, dir_.string());
    meter.record(7, 1LL << 40, 0.0412);
  }
  const std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 1u);
  const nlohmann::json r = nlohmann::json::parse(got[0]);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r.size(), 6u) << "schema v1 has exactly v, time, rank, step, samples, seconds";
  EXPECT_TRUE(r["v"].is_number_integer());
  EXPECT_EQ(r["v"].get<int>(), 1);
  EXPECT_TRUE(r["time"].is_number_float());
  EXPECT_NEAR(r["time"].get<double>(), unix_now(), 60.0);
  EXPECT_TRUE(r["rank"].is_number_integer());
  EXPECT_EQ(r["rank"].get<int>(), 0);
  EXPECT_TRUE(r["step"].is_number_integer());
  EXPECT_EQ(r["step"].get<std::int64_t>(), 7);
  EXPECT_TRUE(r["samples"].is_number_integer());
  EXPECT_EQ(r["samples"].get<std::int64_t>(), 1LL << 40);
  EXPECT_TRUE(r["seconds"].is_number_float());
  EXPECT_EQ(r["seconds"].get<double>(), 0.0412) << "doubles round-trip exactly";
}

TEST_F(MeterTest, BuffersUntilFlush) {
  dtrain::Meter meter(ctx_, dir_.string());
  meter.record(0, 1, 1.0);
  EXPECT_EQ(fs::file_size(file()), 0u);
  meter.flush();
  EXPECT_EQ(lines().size(), 1u);
  meter.flush();  // nothing new: nothing written twice
  EXPECT_EQ(lines().size(), 1u);
}

TEST_F(MeterTest, FlushesByItselfPast64KiB) {
  dtrain::Meter meter(ctx_, dir_.string());
  int written = 0;
  while (fs::file_size(file()) == 0 && written < 100000) meter.record(written++, 1, 0.001);
  const auto size = fs::file_size(file());
  EXPECT_GE(size, 64u * 1024u);
  EXPECT_LT(size, 64u * 1024u + 200u) << "flushed as soon as the buffer passed 64 KiB";
  EXPECT_EQ(lines().size(), static_cast<std::size_t>(written)) << "only whole lines on disk";
}

TEST_F(MeterTest, RunDirFromTheEnvironment) {
  setenv("DTRAIN_RUN_DIR", dir_.c_str(), 1);
  {
    dtrain::Meter meter(ctx_);
    EXPECT_TRUE(meter.enabled());
    meter.record(3, 10, 1.0);
  }
  EXPECT_EQ(lines().size(), 1u);
}

TEST_F(MeterTest, ArgumentWinsOverTheEnvironment) {
  const fs::path other = dir_ / "other";
  fs::create_directories(other);
  setenv("DTRAIN_RUN_DIR", other.c_str(), 1);
  dtrain::Meter meter(ctx_, dir_.string());
  EXPECT_EQ(meter.path(), file().string());
}

TEST_F(MeterTest, DisabledWithoutARunDirWritesNothing) {
  {
    dtrain::Meter meter(ctx_);
    EXPECT_FALSE(meter.enabled());
    EXPECT_EQ(meter.path(), "");
    meter.record(0, 1, 1.0);
    meter.flush();
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(MeterTest, AppendsToAnExistingFile) {
  {
    dtrain::Meter meter(ctx_, dir_.string());
    meter.record(0, 1, 1.0);
  }
  {
    dtrain::Meter meter(ctx_, dir_.string());
    meter.record(1, 1, 1.0);
  }
  EXPECT_EQ(lines().size(), 2u);
}

TEST_F(MeterTest, MovedMeterKeepsItsRecords) {
  dtrain::Meter a(ctx_, dir_.string());
  a.record(0, 1, 1.0);
  dtrain::Meter b = std::move(a);
  EXPECT_FALSE(a.enabled());  // NOLINT(bugprone-use-after-move): checking the moved-from state
  b.record(1, 1, 1.0);
  b.flush();
  EXPECT_EQ(lines().size(), 2u);
}

TEST_F(MeterTest, MissingDirectoryNamesThePathAndTheCause) {
  const std::string missing = (dir_ / "no" / "such").string();
  EXPECT_EQ(meter_error(missing), "dtrain: meter: cannot open " + missing +
                                      "/rank-00000.jsonl: No such file or directory; expected an "
                                      "existing, writable run directory");
}

TEST_F(MeterTest, UnwritableDirectoryNamesThePathAndTheCause) {
  // A regular file where the directory should be: refused even for root, unlike a chmod.
  const fs::path not_a_dir = dir_ / "file";
  std::ofstream(not_a_dir) << "x";
  EXPECT_EQ(meter_error(not_a_dir.string()),
            "dtrain: meter: cannot open " + not_a_dir.string() +
                "/rank-00000.jsonl: Not a directory; expected an existing, writable run directory");
}

TEST_F(MeterTest, BadMeasurementsAreRejectedEvenWhenDisabled) {
  for (const std::string& run_dir : {dir_.string(), std::string()}) {
    dtrain::Meter meter(ctx_, run_dir);
    EXPECT_THROW(meter.record(0, -1, 1.0), dtrain::Error);
    EXPECT_THROW(meter.record(0, 1, -0.5), dtrain::Error);
    EXPECT_THROW(meter.record(0, 1, std::numeric_limits<double>::quiet_NaN()), dtrain::Error);
    EXPECT_THROW(meter.record(0, 1, std::numeric_limits<double>::infinity()), dtrain::Error);
  }
  try {
    dtrain::Meter meter(ctx_, dir_.string());
    meter.record(4, -3, 1.0);
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
    EXPECT_EQ(std::string(e.what()),
              "dtrain: meter: record: bad measurement; expected samples >= 0 and finite seconds "
              ">= 0, got samples=-3 seconds=1");
  }
  EXPECT_EQ(lines().size(), 0u);
}

}  // namespace
