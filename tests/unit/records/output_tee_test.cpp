// The output tee with a real child: a shell that writes to stdout and stderr and exits; the bytes
// of the rank log and of the passthrough files are checked.
#include "records/output_tee.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../support/scratch_dir.hpp"
#include "records/log_line.hpp"

namespace dtrain::records {
namespace {

using test_support::slurp;

class OutputTee : public test_support::ScratchDirTest {
 protected:
  OutputTee() : ScratchDirTest("dtrain-output-tee-") {}

  // Runs `sh -c script` through the tee as rank 5 of 8; returns its wait status and fills lines_
  // with the log's lines, each checked for its timestamp and returned without it.
  int run(const char* script) {
    const int log = open_rank_log((dir_ / "rank-00005.log").string());
    const int out = ::open((dir_ / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err = ::open((dir_ / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const TeedChild child = fork_with_output_pipes("test");
    if (child.pid == 0) {
      ::execl("/bin/sh", "sh", "-c", script, static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const int status =
        tee_output(child, {log, out, err}, {5, 8, "node7", 1, 4, 0, "sh -c"}, "test");
    for (int fd : {log, out, err}) ::close(fd);
    std::istringstream text(slurp(dir_ / "rank-00005.log"));
    for (std::string line; std::getline(text, line);) {
      EXPECT_TRUE(parse_log_timestamp(line)) << line;
      lines_.push_back(line.substr(kLogTimestampWidth + 1));
    }
    pid_ = child.pid;
    return status;
  }

  std::vector<std::string> lines_;
  pid_t pid_ = 0;
};

TEST_F(OutputTee, FramesTheChildsLinesWithTheStartAndExitLines) {
  const int status = run("echo hello; echo oops >&2; echo world; printf 'no newline'; exit 3");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_EQ(slurp(dir_ / "out"), "hello\nworld\nno newline\n");
  EXPECT_EQ(slurp(dir_ / "err"), "oops\n");
  ASSERT_EQ(lines_.size(), 6u);
  EXPECT_EQ(lines_.front(), "dtrain: rank 5 of 8 started on node7 (local rank 1 of 4, pid " +
                                std::to_string(pid_) + "): sh -c");
  EXPECT_EQ(lines_.back(), "dtrain: rank 5 exited with status 3");
  // stdout keeps its order; stderr interleaves anywhere.
  std::vector<std::string> body(lines_.begin() + 1, lines_.end() - 1);
  body.erase(std::remove(body.begin(), body.end(), "oops"), body.end());
  EXPECT_EQ(body, (std::vector<std::string>{"hello", "world", "no newline"}));
}

TEST_F(OutputTee, AChildKilledBySignalEndsTheLogSaying) {
  const int status = run("echo bye; kill -9 $$");
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), 9);
  ASSERT_EQ(lines_.size(), 3u);
  EXPECT_EQ(lines_[1], "bye");
  EXPECT_EQ(lines_[2], "dtrain: rank 5 was killed by signal 9 (SIGKILL)");
}

TEST_F(OutputTee, AGrandchildHoldingThePipesDoesNotKeepTheLoggerWaiting) {
  const auto t0 = std::chrono::steady_clock::now();
  const int status = run("sleep 5 & echo left; exit 0");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(4));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(lines_.back(), "dtrain: rank 5 exited with status 0");
}

TEST(RankExit, FromAWaitStatus) {
  EXPECT_EQ(rank_exit(2, 3 << 8).status, 3);  // exited with 3
  EXPECT_EQ(rank_exit(2, 9).signal, 9);       // killed by SIGKILL
  EXPECT_EQ(rank_exit(2, 9).rank, 2);
}

}  // namespace
}  // namespace dtrain::records
