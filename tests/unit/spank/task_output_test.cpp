#include "task_output.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "../support/scratch_dir.hpp"

namespace dtrain::spank {
namespace {

using test_support::slurp;

class TaskOutput : public test_support::ScratchDirTest {
 protected:
  TaskOutput() : ScratchDirTest("dtrain-task-output-") {}

  // Forks a "task" with stdout/stderr on files, runs `task` after tee_task_output in it, and
  // returns the wait status of the process Slurm would wait for.
  template <typename Task>
  int run(Task task) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int out = ::open((dir_ / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = ::open((dir_ / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(out, STDOUT_FILENO);
      ::dup2(err, STDERR_FILENO);
      tee_task_output((dir_ / "logs").string(), {7, 8, "node3", 3, 4, 0, "train --fast"});
      task();
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
  }
};

TEST_F(TaskOutput, LinesPassThroughAndLandInTheRankLogWithTimestamps) {
  const int status = run([] {
    const char out[] = "hello\nworld\n";
    const char err[] = "oops\nno newline at the end";
    (void)!::write(STDOUT_FILENO, out, sizeof out - 1);
    (void)!::write(STDERR_FILENO, err, sizeof err - 1);
    ::_exit(3);
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);  // the task's status, through the logger
  EXPECT_EQ(slurp(dir_ / "stdout"), "hello\nworld\n");
  EXPECT_EQ(slurp(dir_ / "stderr"), "oops\nno newline at the end\n");
  const std::string log = slurp(dir_ / "logs" / "rank-00007.log");
  const std::regex stamp(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z )");
  std::istringstream lines(log);
  std::vector<std::string> texts;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(line, m, stamp) && m.position(0) == 0) << line;
    texts.push_back(line.substr(m.length(0)));
  }
  // Framed by run-rank's start and exit lines, so `dtrain logs --first-error` reads plugin runs.
  ASSERT_EQ(texts.size(), 6u);
  EXPECT_EQ(texts.front().rfind("dtrain: rank 7 of 8 started on node3 (local rank 3 of 4, pid ", 0),
            0u)
      << texts.front();
  EXPECT_EQ(texts.front().substr(texts.front().size() - 15), "): train --fast");
  EXPECT_EQ(texts.back(), "dtrain: rank 7 exited with status 3");
  std::vector<std::string> body(texts.begin() + 1, texts.end() - 1);
  std::sort(body.begin(), body.end());  // stdout and stderr interleave in any order
  EXPECT_EQ(body, (std::vector<std::string>{"hello", "no newline at the end", "oops", "world"}));
}

TEST_F(TaskOutput, TaskKilledBySignalIsReportedAsSuch) {
  const int status = run([] { ::kill(::getpid(), SIGTERM); });
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

TEST_F(TaskOutput, UnwritableDirectoryIsNamed) {
  const auto file = dir_ / "a-file";
  std::ofstream(file) << "x";
  try {
    tee_task_output((file / "sub").string(), {});
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("dtrain: --dtrain-run-dir: cannot create " +
                                         (file / "sub").string()),
              std::string::npos);
  }
}

}  // namespace
}  // namespace dtrain::spank
