#include "run_dir.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
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

// What `stats` and `report` take from plan.json and job.yaml (parse_run_summary has the cases);
// a damaged plan.json is named, one that is no regular file is left out.
TEST_F(RunDirTest, RunSummaryComesFromPlanAndSpec) {
  write(dir_ / "plan.json",
        R"({"version":1,"job":{"name":"fm","id":"42","site":"polaris"},"nodes":2,)"
        R"("ranks_per_node":4,"world_size":8,"ranks":[]})");
  write(dir_ / "job.yaml", "name: fm\ngpus_per_rank: 1\n");
  EXPECT_EQ(read_run_summary(dir_.string() + "/"),
            (RunSummary{dir_.filename().string(), "fm", "42", "polaris", 2, 4, 8, 1}));
  write(dir_ / "plan.json", "{\"job\": not json");
  try {
    read_run_summary(dir_.string());
    FAIL() << "a damaged plan.json was read";
  } catch (const RunSummaryError& e) {
    EXPECT_EQ(std::string(e.what()), "dtrain: " + (dir_ / "plan.json").string() +
                                         ": expected a launch plan (JSON), got text that is "
                                         "not JSON");
  }
  fs::remove(dir_ / "plan.json");
  ASSERT_EQ(mkfifo((dir_ / "plan.json").c_str(), 0600), 0);
  EXPECT_EQ(read_run_summary(dir_.string()).job, "");
  EXPECT_EQ(read_run_summary((dir_ / "nosuch").string()).nodes, 0);
}

// What the batch script's last lines write; anything else is no status.
TEST_F(RunDirTest, ExitStatusIsTheNumberTheScriptWrote) {
  EXPECT_EQ(read_exit_status(dir_.string()), std::nullopt);
  write(dir_ / "exit-status", "3\n");
  EXPECT_EQ(read_exit_status(dir_.string()), 3);
  write(dir_ / "exit-status", "");
  EXPECT_EQ(read_exit_status(dir_.string()), std::nullopt);
  write(dir_ / "exit-status", "3x\n");
  EXPECT_EQ(read_exit_status(dir_.string()), std::nullopt);
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
    EXPECT_EQ(std::string(e.what()), "dtrain: " + dir_.string() +
                                         "/rank-00003.jsonl:2: expected one JSON object per line");
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

std::string records_error(const std::function<void()>& read) {
  try {
    read();
  } catch (const dtrain::InputFileError& e) {  // bad input: exit 2
    return e.what();
  }
  return "(no error)";
}

// A FIFO in place of attempts.jsonl blocked `logs --first-error`, `--hang` and `stats` forever; a
// symlink to /dev/zero was read until memory ran out. The record files are read as every input.
TEST_F(RunDirTest, SpecialRecordFilesAreRefusedWithoutReadingOrBlocking) {
  const std::string dir = dir_.string();
  ASSERT_EQ(mkfifo((dir_ / "attempts.jsonl").c_str(), 0600), 0);
  EXPECT_EQ(records_error([&] { read_attempt_records(dir); }),
            "dtrain: " + dir +
                "/attempts.jsonl: expected attempt records (JSON Lines), got a FIFO "
                "(named pipe)");
  EXPECT_EQ(records_error([&] { read_last_attempt(dir); }),
            records_error([&] { read_attempt_records(dir); }));
  fs::create_symlink("/dev/zero", dir_ / "checkpoints.jsonl");
  EXPECT_EQ(records_error([&] { read_checkpoint_records(dir); }),
            "dtrain: " + dir +
                "/checkpoints.jsonl: expected checkpoint records (JSON Lines), got a character "
                "device");
  fs::create_directory(dir_ / "job-end.jsonl");
  EXPECT_EQ(
      records_error([&] { read_job_end_record(dir); }),
      "dtrain: " + dir + "/job-end.jsonl: expected job end records (JSON Lines), got a directory");
}

TEST_F(RunDirTest, RecordFilesAreReadUpToACap) {
  write(dir_ / "checkpoints.jsonl", std::string((std::size_t{64} << 20) + 1, '\n'));
  EXPECT_EQ(records_error([&] { read_checkpoint_records(dir_.string()); }),
            "dtrain: " + dir_.string() +
                "/checkpoints.jsonl: expected checkpoint records (JSON Lines) of at most 67108864 "
                "bytes, got 67108865 bytes");
  write(dir_ / "checkpoints.jsonl", "\n\n");
  EXPECT_TRUE(read_checkpoint_records(dir_.string()).empty());
}

// A bad attempt record is named by its path and line, whichever command reads it.
TEST_F(RunDirTest, BadAttemptRecordsNameThePathLineAndField) {
  write(dir_ / "attempts.jsonl",
        "\n{\"v\":1,\"attempt\":2147483647,\"start\":\"2026-11-22T10:00:00Z\","
        "\"end\":\"2026-11-22T10:00:10Z\",\"status\":1,\"outcome\":\"restarted\","
        "\"cause\":\"\",\"ranks\":1,\"nodes\":[],\"checkpoints\":0}\n");
  try {
    read_last_attempt(dir_.string());
    FAIL() << "attempt 2147483647 was taken";
  } catch (const records::AttemptFormatError& e) {
    EXPECT_EQ(std::string(e.what()),
              "dtrain: " + dir_.string() +
                  "/attempts.jsonl:2: field \"attempt\": expected an integer from 0 to 999999, "
                  "got 2147483647");
  }
}

// rank-000001.log beside rank-00001.log was a second rank 1; a symlink loop named like a rank file
// was a raw "filesystem error" (exit 1). Neither is a rank file.
TEST_F(RunDirTest, OnlyRegularFilesWithTheWritersNamesAreRankFiles) {
  write(dir_ / "rank-00001.log", "a\n");
  write(dir_ / "rank-000001.log", "a\n");
  write(dir_ / "rank-00002.log", "b\n");
  fs::create_symlink("rank-00003.log", dir_ / "rank-00003.log");
  fs::create_symlink("nothing", dir_ / "rank-00004.log");
  ASSERT_EQ(mkfifo((dir_ / "rank-00005.log").c_str(), 0600), 0);
  const auto files = list_rank_files(dir_.string(), "log");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].rank, 1);
  EXPECT_EQ(files[0].path, (dir_ / "rank-00001.log").string());
  EXPECT_EQ(files[1].rank, 2);
}

TEST_F(RunDirTest, ARunDirectoryThatIsNoneSaysWhatItIs) {
  const auto error = [](const fs::path& p) {
    try {
      require_run_dir(p.string());
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  fs::create_symlink("loop", dir_ / "loop");
  EXPECT_EQ(error(dir_ / "loop"), "dtrain: " + (dir_ / "loop").string() +
                                      ": expected a run directory, got a symbolic link loop (Too "
                                      "many levels of symbolic links)");
  EXPECT_EQ(error(dir_ / "none"), "dtrain: " + (dir_ / "none").string() +
                                      ": expected a run directory, got nothing (no such path)");
  write(dir_ / "file", "");
  EXPECT_EQ(error(dir_ / "file"),
            "dtrain: " + (dir_ / "file").string() + ": expected a run directory, got a file");
  EXPECT_EQ(error(dir_), "(no error)");
}

// Heartbeats `from`..`to` (enter records) of `rank` in `attempt`, a second apart from `t0`.
std::string heartbeats(int rank, int from, int to, int attempt, double t0) {
  std::string out;
  for (int k = from; k <= to; ++k) {
    char line[256];
    const int n = records::format_collective_record(line, sizeof line, t0 + k, rank, k, "allreduce",
                                                    64, /*enter=*/true, /*failed=*/false, attempt);
    out += std::string(line, static_cast<std::size_t>(n)) + "\n";
  }
  return out;
}

// A job that restarted once: in attempt 0 rank 1 fell behind (#5 against rank 0's #10) and
// failed; in attempt 1 rank 0 stopped before collective #3 that rank 1 entered. Both attempts'
// lines and heartbeats are in the same files; the report speaks of attempt 1 only: rank 0. Rank 2
// ran in attempt 0 only (the world shrank) and is no part of it.
TEST_F(RunDirTest, FirstErrorAndHangSpeakOfTheLastAttemptOnly) {
  const std::string t0 = "2026-11-22T10:00:";
  write(dir_ / "rank-00000.log",
        t0 + "00.000000Z dtrain: rank 0 of 3 started on node0 (local rank 0 of 1, pid 1): ./t\n" +
            t0 + "20.000000Z dtrain: rank 0 was killed by signal 15 (SIGTERM)\n" + t0 +
            "30.000000Z dtrain: rank 0 of 2 started on node0 (local rank 0 of 1, pid 5, attempt "
            "1): ./t\n" +
            t0 + "33.000000Z step 3\n");
  write(dir_ / "rank-00001.log",
        t0 + "00.000000Z dtrain: rank 1 of 3 started on node1 (local rank 0 of 1, pid 2): ./t\n" +
            t0 + "06.000000Z ValueError: boom\n" + t0 +
            "06.100000Z dtrain: rank 1 exited with status 3\n" + t0 +
            "30.000000Z dtrain: rank 1 of 2 started on node1 (local rank 0 of 1, pid 6, attempt "
            "1): ./t\n" +
            t0 + "50.000000Z dtrain: rank 1 was killed by signal 9 (SIGKILL)\n");
  write(dir_ / "rank-00002.log",
        t0 + "00.000000Z dtrain: rank 2 of 3 started on node2 (local rank 0 of 1, pid 3): ./t\n" +
            t0 + "01.000000Z OSError: disk\n" + t0 +
            "01.000000Z dtrain: rank 2 exited with status 1\n");
  const double start = 1795341600.0;  // 2026-11-22T10:00:00Z
  write(dir_ / "rank-00000.jsonl",
        heartbeats(0, 0, 10, 0, start) + heartbeats(0, 0, 2, 1, start + 30));
  write(dir_ / "rank-00001.jsonl",
        heartbeats(1, 0, 5, 0, start) + heartbeats(1, 0, 3, 1, start + 30));
  records::AttemptRecord a0;
  a0.outcome = "restarted";
  a0.start = "2026-11-22T10:00:00.000000Z";
  a0.end = "2026-11-22T10:00:25.000000Z";
  append_attempt_record(dir_.string(), a0);

  const auto report = read_first_error(dir_.string(), list_rank_files(dir_.string(), "log"));
  ASSERT_TRUE(report.culprit);
  EXPECT_EQ(report.culprit->rank, 0);
  EXPECT_EQ(report.culprit_reason,
            "never entered collective #3 (allreduce of 64 bytes) that the other ranks entered");
  EXPECT_EQ(report.ranks, 2);
  ASSERT_EQ(report.victims.size(), 1u);
  EXPECT_EQ(report.victims[0].rank, 1);
  EXPECT_EQ(report.victims[0].how, "was killed by signal 9 (SIGKILL)");

  // `--first-error --attempt 1` (from 0 here): attempt 0's lines only, up to attempt 1's start
  // lines, with its three ranks: rank 2 failed first, at 01 s; rank 1's end is its exit status 3 of
  // attempt 0, not the SIGKILL of attempt 1.
  const auto first = read_first_error(dir_.string(), list_rank_files(dir_.string(), "log"), 0);
  ASSERT_TRUE(first.culprit);
  EXPECT_EQ(first.culprit->rank, 2);
  EXPECT_EQ(first.ranks, 3);
  for (const auto& v : first.victims) {
    EXPECT_NE(v.how, "was killed by signal 9 (SIGKILL)") << "rank " << v.rank;
  }

  EXPECT_EQ(read_last_attempt(dir_.string()), 1);
  const auto tracker = read_heartbeats(dir_.string(), read_last_attempt(dir_.string()));
  ASSERT_TRUE(tracker);
  const report::HangReport hang = report::detect_hang(*tracker);
  ASSERT_EQ(hang.never_entered.size(), 1u);
  EXPECT_EQ(hang.never_entered[0].rank, 0);
}

// What `dtrain submit` recorded of the job's end reaches --first-error later: rank 1's logger was
// killed before its exit line at the walltime, and is not blamed once job-end.jsonl says so.
TEST_F(RunDirTest, TheRecordedWalltimeEndReachesFirstError) {
  const std::string t0 = "2026-11-22T10:00:";
  write(dir_ / "rank-00000.log",
        t0 + "00.000000Z dtrain: rank 0 of 2 started on node0 (local rank 0 of 2, pid 1): ./t\n" +
            t0 + "20.000000Z dtrain: rank 0 was killed by signal 15 (SIGTERM)\n");
  write(dir_ / "rank-00001.log",
        t0 + "00.000000Z dtrain: rank 1 of 2 started on node0 (local rank 1 of 2, pid 2): ./t\n" +
            t0 + "10.000000Z step 9\n");
  const auto logs = list_rank_files(dir_.string(), "log");
  EXPECT_FALSE(read_job_end_record(dir_.string()));
  ASSERT_TRUE(read_first_error(dir_.string(), logs).culprit);

  append_job_end_record(dir_.string(), {124, true});
  const auto end = read_job_end_record(dir_.string());
  ASSERT_TRUE(end);
  EXPECT_EQ(end->status, 124);
  const auto report = read_first_error(dir_.string(), logs);
  EXPECT_FALSE(report.culprit);
  EXPECT_TRUE(report.walltime_reached);
  EXPECT_EQ(report.stopped.size(), 2u);
}

// attempts.jsonl names the ranks and nodes of the attempt it records: the start lines of that
// attempt, not each log's first (attempt 0 ran on node0 and node1, attempt 1 on node2 only, with
// one rank fewer; a log without a start line of the attempt is a rank it did not have).
TEST_F(RunDirTest, AttemptHostsComeFromThatAttemptsStartLines) {
  const std::string t = "2026-11-22T10:00:00.000000Z ";
  write(dir_ / "rank-00000.log",
        t + "dtrain: rank 0 of 2 started on node0 (local rank 0 of 1, pid 1): ./t\nout\n" + t +
            "dtrain: rank 0 exited with status 1\n" + t +
            "dtrain: rank 0 of 1 started on node2 (local rank 0 of 1, pid 7, attempt 1): ./t\n");
  write(dir_ / "rank-00001.log",
        t + "dtrain: rank 1 of 2 started on node1 (local rank 0 of 1, pid 2): ./t\n");
  EXPECT_EQ(read_attempt_hosts(dir_.string(), 1), (std::map<int, std::string>{{0, "node2"}}));
  EXPECT_EQ(read_attempt_hosts(dir_.string(), 0),
            (std::map<int, std::string>{{0, "node0"}, {1, "node1"}}));
  EXPECT_TRUE(read_attempt_hosts(dir_.string(), 2).empty());
}

}  // namespace
}  // namespace dtrain::cli
