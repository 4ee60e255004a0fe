#include "run_dir.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/errors.hpp"
#include "common/input_file.hpp"
#include "plan/job_spec.hpp"

namespace dtrain::cli {
namespace {
namespace fs = std::filesystem;

class RunDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dtrain-run-dir-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

  fs::path dir_;
};

TEST_F(RunDirTest, WritesSpecScriptAndPlan) {
  plan::LaunchPlan plan;
  plan.name = "pi";
  plan.site = "local";
  plan.job_id = "7";
  plan.run_dir = (dir_ / "runs" / "pi-7").string();
  plan.script = "#!/bin/sh\necho hi\n";
  plan.ranks = {{0, 0, 0, "h"}, {1, 0, 1, "h"}};
  write_run_dir(plan, "name: pi\n");
  EXPECT_EQ(read(dir_ / "runs/pi-7/job.yaml"), "name: pi\n");
  EXPECT_EQ(read(dir_ / "runs/pi-7/launch.sh"), plan.script);
  EXPECT_TRUE((fs::status(dir_ / "runs/pi-7/launch.sh").permissions() & fs::perms::owner_exec) !=
              fs::perms::none);
  auto json = nlohmann::json::parse(read(dir_ / "runs/pi-7/plan.json"));
  EXPECT_EQ(json["world_size"], 2);
  EXPECT_EQ(json["ranks"][1]["local_rank"], 1);
}

TEST_F(RunDirTest, NeverOverwritesAPreviousRun) {
  plan::LaunchPlan plan;
  plan.run_dir = dir_.string();
  write(dir_ / "rank-00000.log", "precious\n");
  EXPECT_THROW(write_run_dir(plan, ""), UsageError);
  EXPECT_EQ(read(dir_ / "rank-00000.log"), "precious\n");
}

TEST_F(RunDirTest, RunStatsSumEveryRanksRecordsAndNameItsHost) {
  write(dir_ / "rank-00000.jsonl",
        "{\"v\":1,\"rank\":0,\"step\":0,\"samples\":10,\"seconds\":1}\n"
        "{\"v\":1,\"rank\":0,\"step\":1,\"samples\":10,\"seconds\":1}\n");
  write(dir_ / "rank-00001.jsonl", "{\"v\":1,\"rank\":1,\"step\":0,\"samples\":5,\"seconds\":1}\n");
  write(dir_ / "rank-00001.log",
        "2026-11-22T10:00:00.000000Z dtrain: rank 1 of 2 started on node7 (local rank 1 of 2, "
        "pid 42): ./train\n");
  const report::RunStats stats = read_run_stats(dir_.string());
  ASSERT_EQ(stats.ranks.size(), 2u);
  EXPECT_EQ(stats.ranks[0].samples, 20);
  EXPECT_EQ(stats.ranks[0].host, "?");  // no log: nothing says where it ran
  EXPECT_EQ(stats.ranks[1].samples, 5);
  EXPECT_EQ(stats.ranks[1].host, "node7");
  EXPECT_EQ(stats.total_samples, 25);
}

TEST_F(RunDirTest, MissingMetricsAndBadLinesAreNamed) {
  try {
    read_run_stats(dir_.string());
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no rank-NNNNN.jsonl metric files"), std::string::npos);
  }
  write(dir_ / "rank-00003.jsonl",
        "{\"v\":1,\"rank\":3,\"step\":0,\"samples\":5,\"seconds\":1}\n{oops\n");
  try {
    read_run_stats(dir_.string());
    FAIL();
  } catch (const records::MetricFormatError& e) {
    EXPECT_EQ(std::string(e.what()),
              "dtrain: stats: rank-00003.jsonl:2: expected one JSON object per line");
  }
}

std::string spec_file_error(const std::string& path) {
  try {
    read_spec_file(path);
  } catch (const dtrain::InputFileError& e) {  // bad input: exit 2
    return e.what();
  }
  return "(no error)";
}

TEST_F(RunDirTest, SpecFileProblemsNameTheFileAndWhatWasExpected) {
  const std::string missing = (dir_ / "missing.yaml").string();
  EXPECT_EQ(spec_file_error(missing), "dtrain: " + missing +
                                          ": cannot open it: No such file or directory; expected "
                                          "a job spec (YAML)");
  EXPECT_EQ(spec_file_error(dir_.string()), "dtrain: " + dir_.string() +
                                                ": expected a job spec (YAML), got a "
                                                "directory");
  write(dir_ / "big.yaml", std::string(plan::kMaxSpecBytes + 1, '#'));
  EXPECT_EQ(spec_file_error((dir_ / "big.yaml").string()),
            "dtrain: " + (dir_ / "big.yaml").string() +
                ": expected a job spec (YAML) of at most 1048576 bytes, got 1048577 bytes");
}

// /dev/zero was read without end, and a FIFO blocked the reader forever.
TEST_F(RunDirTest, SpecialFilesAreRefusedWithoutReadingOrBlocking) {
  fs::create_symlink("/dev/zero", dir_ / "zero.yaml");
  EXPECT_EQ(spec_file_error((dir_ / "zero.yaml").string()),
            "dtrain: " + (dir_ / "zero.yaml").string() +
                ": expected a job spec (YAML), got a character device");
  ASSERT_EQ(mkfifo((dir_ / "fifo.yaml").c_str(), 0600), 0);
  EXPECT_EQ(spec_file_error((dir_ / "fifo.yaml").string()),
            "dtrain: " + (dir_ / "fifo.yaml").string() +
                ": expected a job spec (YAML), got a FIFO (named pipe)");
}

}  // namespace
}  // namespace dtrain::cli
