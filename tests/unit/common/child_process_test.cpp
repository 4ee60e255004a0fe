// The processes dtrain starts (common/child_process.hpp): a child's end as an exit code and as
// blame, the status of a command that cannot run, and spawn_forwarding's environment, group, exec
// failure and signals, as the processes it starts see them.
#include "common/child_process.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/signal_forwarding.hpp"

namespace dtrain {
namespace {

// waitpid's status of a child that ran `body` (which exits or kills itself).
template <typename F>
int status_of(F body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

int exited(int code) {
  return status_of([code] { ::_exit(code); });
}
int killed(int sig) {
  return status_of([sig] {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  });
}

TEST(ChildProcess, AnEndReadsAsTheShellsExitCode) {
  EXPECT_EQ(exit_code_of(exited(0)), 0);
  EXPECT_EQ(exit_code_of(exited(3)), 3);
  EXPECT_EQ(exit_code_of(killed(SIGTERM)), 128 + SIGTERM);
  EXPECT_EQ(exit_code_of(killed(SIGKILL)), 137);
  EXPECT_EQ(killing_signal(killed(SIGSEGV)), SIGSEGV);
  EXPECT_EQ(killing_signal(exited(9)), 0);
}

TEST(ChildProcess, ACommandThatCannotRunHasTheShellsStatus) {
  EXPECT_EQ(exec_failure_status(ENOENT), 127);
  EXPECT_EQ(exec_failure_status(EACCES), 126);
  EXPECT_EQ(exec_failure_status(ENOEXEC), 126);
}

TEST(ChildProcess, AVictimFailedOrDiedWritingToALostPeer) {
  EXPECT_TRUE(is_victim_status(exited(1)));
  EXPECT_TRUE(is_victim_status(exited(255))) << "Open MPI's abort";
  EXPECT_TRUE(is_victim_status(killed(SIGPIPE)));
  EXPECT_FALSE(is_victim_status(exited(0)));
  EXPECT_FALSE(is_victim_status(killed(SIGKILL))) << "the lost rank itself, or its launcher's kill";
  EXPECT_FALSE(is_victim_status(killed(SIGTERM)));
}

// What a child wrote to a file, read back.
std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temp_path(const char* name) {
  return ::testing::TempDir() + "child_process_" + std::to_string(::getpid()) + "_" + name;
}

TEST(SpawnForwarding, TheChildGetsTheVariablesSetAndNotThoseUnset) {
  const std::string out = temp_path("env");
  ::setenv("DTRAIN_TEST_KEPT", "kept", 1);
  ::setenv("DTRAIN_TEST_GONE", "gone", 1);
  ::setenv("DTRAIN_TEST_REPLACED", "old", 1);
  SignalForwarding signals;
  SpawnOptions options;
  options.set = {{"DTRAIN_TEST_REPLACED", "new"}, {"DTRAIN_TEST_ADDED", "7"}};
  options.unset = {"DTRAIN_TEST_GONE"};
  const SpawnedEnd end =
      spawn_forwarding(signals,
                       {"/bin/sh", "-c",
                        "echo \"$DTRAIN_TEST_KEPT ${DTRAIN_TEST_GONE-unset} $DTRAIN_TEST_REPLACED "
                        "$DTRAIN_TEST_ADDED\" > " +
                            out + "; exit 4"},
                       options, "test");
  EXPECT_EQ(end.exec_error, 0);
  EXPECT_EQ(exit_code_of(end.wait_status), 4);
  EXPECT_EQ(read_all(out), "kept unset new 7\n");
  EXPECT_STREQ(std::getenv("DTRAIN_TEST_GONE"), "gone") << "the parent's environment is its own";
  ::unlink(out.c_str());
}

TEST(SpawnForwarding, ACommandThatCannotRunSaysWhyAndDoesNotThrow) {
  SignalForwarding signals;
  const SpawnedEnd missing =
      spawn_forwarding(signals, {"/nonexistent/dtrain-no-such-program"}, {}, "test");
  EXPECT_EQ(missing.exec_error, ENOENT);
  EXPECT_EQ(exit_code_of(missing.wait_status), 127);
  const std::string plain = temp_path("not_executable");
  std::ofstream(plain) << "not a program\n";
  const SpawnedEnd refused = spawn_forwarding(signals, {plain}, {}, "test");
  EXPECT_EQ(refused.exec_error, EACCES);
  EXPECT_EQ(exit_code_of(refused.wait_status), 126);
  ::unlink(plain.c_str());
}

TEST(SpawnForwarding, OwnGroupLeadsAGroupAndGetsTheSignalsPassedOn) {
  const std::string out = temp_path("group");
  SignalForwarding signals;
  SpawnOptions options;
  options.own_group = true;
  // The child writes its group, then sends the parent SIGTERM and waits for it to come back.
  const SpawnedEnd end =
      spawn_forwarding(signals,
                       {"/bin/sh", "-c",
                        "cut -d' ' -f5 /proc/$$/stat > " + out + "; echo $$ >> " + out +
                            "; kill -TERM $PPID; sleep 30"},
                       options, "test");
  EXPECT_EQ(killing_signal(end.wait_status), SIGTERM);
  EXPECT_EQ(signals.last_signal(), SIGTERM);
  std::istringstream lines(read_all(out));
  std::string group;
  std::string pid;
  lines >> group >> pid;
  EXPECT_EQ(group, pid) << "the child leads a group of its own";
  EXPECT_NE(group, std::to_string(::getpgrp()));
  ::unlink(out.c_str());
}

TEST(ExecInPlace, ACommandThatCannotRunReturnsTheShellsStatus) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(exec_in_place({"/nonexistent/dtrain-no-such-program", "x"}, "dtrain: test"), 127);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "dtrain: test: cannot run /nonexistent/dtrain-no-such-program: No such file or "
            "directory\n");
}

TEST(ExecOrExit, AForkedChildThatCannotRunSaysWhyAndExits127) {
  const ExecArgs args({"/nonexistent/dtrain-no-such-program"});
  int err_pipe[2];
  ASSERT_EQ(::pipe(err_pipe), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(err_pipe[1], STDERR_FILENO);
    exec_or_exit(args, "dtrain: test");
  }
  ::close(err_pipe[1]);
  std::string text;
  char buf[256];
  ssize_t n = 0;
  while ((n = ::read(err_pipe[0], buf, sizeof buf)) > 0) text.append(buf, n);
  ::close(err_pipe[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(exit_code_of(status), 127);
  EXPECT_EQ(text,
            "dtrain: test: cannot run /nonexistent/dtrain-no-such-program: No such file or "
            "directory\n");
}

}  // namespace
}  // namespace dtrain
