// A rank beside this one that Open MPI ended because its connection to a lost rank broke (exit
// status 255 or SIGPIPE, left a zombie by its logger) is a victim: the watch waits for the alarm
// naming the rank lost first instead of naming it (issue 33 item 5).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "comm/lost_peers/peer_alarm.hpp"
#include "comm/lost_peers/peer_watch.hpp"
#include "loopback_job.hpp"
#include "peer_watch_support.hpp"

namespace {

using dtrain::runtime::PeerProcess;
using dtrain::runtime::PeerWatch;
using dtrain::test::as_rank;
using dtrain::test::kToken;
using dtrain::test::LoopbackJob;
using dtrain::test::Reports;
using namespace std::chrono_literals;

// A child that runs `end` and is left a zombie (waited for without being reaped), as a rank's
// logger leaves a failed rank; returns its pid (reaped by the caller).
pid_t zombie(void (*end)()) {
  const pid_t pid = fork();
  if (pid == 0) {
    end();
    _exit(0);
  }
  siginfo_t info{};
  EXPECT_EQ(waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);
  return pid;
}

TEST(PeerWatchVictim, AProcessThatFailedOrDiedOfSigpipeIsAVictimWhileItIsAZombie) {
  using dtrain::runtime::ended_as_victim;
  struct Case {
    void (*end)();
    bool victim;
  };
  const Case cases[] = {
      {[] { _exit(255); }, true},       // Open MPI's abort
      {[] { raise(SIGPIPE); }, true},   // a write to a closed connection
      {[] { _exit(1); }, true},         // any failure: it may have failed because of a loss
      {[] { raise(SIGKILL); }, false},  // the lost rank itself, or the launcher's kill
      {[] { _exit(0); }, false},        // finished
  };
  for (const Case& c : cases) {
    const pid_t pid = zombie(c.end);
    EXPECT_EQ(ended_as_victim(pid), c.victim) << "pid " << pid;
    waitpid(pid, nullptr, 0);
    EXPECT_FALSE(ended_as_victim(pid)) << "reaped: nothing to read";
  }
  EXPECT_FALSE(ended_as_victim(getpid())) << "running";
}

// A child that exits with status 255 after `ms` and stays a zombie until reaped (this process is
// its parent, as a rank's logger is the rank's): what Open MPI leaves of a rank whose connection
// to a lost rank broke.
pid_t victim_after(int ms) {
  const pid_t pid = fork();
  if (pid == 0) {
    usleep(static_cast<useconds_t>(ms) * 1000);
    _exit(255);
  }
  return pid;
}

// Issue 33 item 5: rank 0 saw rank 1 (beside it, ended by Open MPI) end before the alarm naming
// rank 3 (lost first, on node2) arrived, and named rank 1. It now waits for that alarm.
TEST(PeerWatchVictim, AVictimBesideThisRankGivesWayToTheAlarmNamingTheRankLostFirst) {
  const pid_t pid = victim_after(50);
  const PeerProcess self = dtrain::runtime::this_process(0, "node1");
  LoopbackJob job(4, kToken);
  Reports reports;
  PeerWatch watch({self, as_rank(1, pid, self)}, self, reports.callback(), job.alarm(0, {2, 3}));
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);
  std::this_thread::sleep_for(50ms);  // within the grace: the alarm is on its way
  EXPECT_EQ(reports.count(), 0u) << "named the victim at once";
  job.send_raw(0, dtrain::runtime::encode_alarm(kToken, {3, "node2", 2}));
  const auto lost = reports.wait_first(5s);
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->rank, 3);
  EXPECT_EQ(reports.told_by.front(), 2);
  waitpid(pid, nullptr, 0);
}

TEST(PeerWatchVictim, WithoutAnAlarmTheVictimIsNamedAfterTheGrace) {
  const pid_t pid = victim_after(0);
  const PeerProcess self = dtrain::runtime::this_process(0, "node1");
  LoopbackJob job(4, kToken);
  Reports reports;
  PeerWatch watch({self, as_rank(1, pid, self)}, self, reports.callback(), job.alarm(0, {2, 3}));
  // Not within the first half of the grace (kVictimGraceMs), then the victim itself.
  EXPECT_FALSE(reports.wait_first(std::chrono::milliseconds(PeerWatch::kVictimGraceMs / 2)));
  const auto lost = reports.wait_first(5s);
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->rank, 1);
  EXPECT_EQ(reports.told_by.front(), -1);
  waitpid(pid, nullptr, 0);
}

}  // namespace
