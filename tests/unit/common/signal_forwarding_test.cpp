// The job signals' forwarding that `dtrain submit`, `dtrain supervise` and run-rank's logger share:
// a signal received goes to the target (a process or a whole group), is remembered, says whether it
// stops the job, and the previous handlers come back afterwards.
#include "common/signal_forwarding.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>

namespace dtrain {
namespace {

// A child in a process group of its own that waits to be killed (60 s at most).
pid_t sleeping_child() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    SignalForwarding::reset_in_child();
    ::sleep(60);
    ::_exit(0);
  }
  ::setpgid(pid, pid);  // both sides, so the group exists before either goes on
  return pid;
}

int killed_by(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1000;
  }
  return WIFSIGNALED(status) ? WTERMSIG(status) : -WEXITSTATUS(status);
}

TEST(SignalForwarding, PassesASignalOnToTheTargetAndRemembersIt) {
  const pid_t child = sleeping_child();
  {
    SignalForwarding signals;
    EXPECT_EQ(signals.last_signal(), 0);
    signals.forward_to(child);
    ::raise(SIGUSR2);
    EXPECT_EQ(killed_by(child), SIGUSR2);
    EXPECT_EQ(signals.last_signal(), SIGUSR2);
    EXPECT_FALSE(signals.stopping()) << "USR2 asks for a checkpoint";
    signals.forward_to(0);
    ::raise(SIGTERM);  // recorded, sent nowhere
    EXPECT_EQ(signals.last_signal(), SIGTERM);
    EXPECT_TRUE(signals.stopping());
  }
  // The previous handler (the default) is back.
  struct sigaction now {};
  ::sigaction(SIGTERM, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);
}

TEST(SignalForwarding, ReachesEveryProcessOfAGroup) {
  const pid_t leader = sleeping_child();
  const pid_t member = ::fork();
  if (member == 0) {
    ::setpgid(0, leader);
    SignalForwarding::reset_in_child();
    ::sleep(60);
    ::_exit(0);
  }
  ::setpgid(member, leader);
  SignalForwarding signals;
  signals.forward_to(-leader);
  ::raise(SIGHUP);
  EXPECT_EQ(killed_by(leader), SIGHUP);
  EXPECT_EQ(killed_by(member), SIGHUP);
}

// `dtrain submit`'s split: the stopping signals to the job's first process, the checkpoint
// signals to another target (its whole group).
TEST(SignalForwarding, SendsTheCheckpointSignalsToTheirOwnTarget) {
  const pid_t first = sleeping_child();
  const pid_t other = sleeping_child();
  SignalForwarding signals;
  signals.forward_to(first, other);
  ::raise(SIGUSR1);
  EXPECT_EQ(killed_by(other), SIGUSR1);
  ::raise(SIGTERM);
  EXPECT_EQ(killed_by(first), SIGTERM);
}

// A child started with block() and start_forwarding() while `raise_before` and `raise_during`
// (0: none) come before the fork and while it is being started: how it was killed.
int child_started_around(int raise_before, int raise_during) {
  SignalForwarding signals;
  if (raise_before != 0) ::raise(raise_before);  // recorded, sent nowhere
  const sigset_t mask = SignalForwarding::block();
  const pid_t child = ::fork();
  if (child == 0) {
    SignalForwarding::reset_in_child(&mask);
    ::sleep(60);
    ::_exit(0);
  }
  if (raise_during != 0) ::raise(raise_during);  // pending until start_forwarding unblocks it
  signals.start_forwarding(child, child, mask);
  return killed_by(child);
}

TEST(SignalForwarding, AChildStartedAfterASignalGetsIt) {
  EXPECT_EQ(child_started_around(SIGQUIT, 0), SIGQUIT);
}

TEST(SignalForwarding, AChildGetsASignalThatCameWhileItWasStarted) {
  EXPECT_EQ(child_started_around(0, SIGHUP), SIGHUP);
}

}  // namespace
}  // namespace dtrain
