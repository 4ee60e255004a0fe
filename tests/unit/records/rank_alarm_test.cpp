// A rank's logger and the peer alarm (records/rank_alarm.hpp): the socket it hands the rank, the
// line it writes for a rank that failed before reporting a loss, and when it writes none. Real
// children (a shell) and a real UDP socket on loopback.
#include "records/rank_alarm.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "../support/scratch_dir.hpp"
#include "records/log_line.hpp"
#include "records/output_tee.hpp"

namespace dtrain::records {
namespace {

using test_support::slurp;

// Sends `datagram` to the socket `fd` is bound to, on loopback.
void send_to(int fd, const std::string& datagram) {
  sockaddr_in at{};
  socklen_t len = sizeof at;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&at), &len), 0);
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int out = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(out, 0);
  ASSERT_EQ(::sendto(out, datagram.data(), datagram.size(), 0,
                     reinterpret_cast<const sockaddr*>(&at), sizeof at),
            static_cast<ssize_t>(datagram.size()));
  ::close(out);
}

class RankAlarmTee : public test_support::ScratchDirTest {
 protected:
  RankAlarmTee() : ScratchDirTest("dtrain-rank-alarm-") {}

  // Runs `sh -c script` as rank 5 of 8 through the tee with an alarm socket; `alarms` are sent to
  // that socket first (they wait there, as the repeats that arrive after a rank ended do).
  // Returns the log's lines without their timestamps.
  std::vector<std::string> run(const char* script, const std::vector<Alarm>& alarms) {
    const RankAlarmSocket alarm = RankAlarmSocket::open();
    EXPECT_GE(alarm.fd(), 0);
    for (const Alarm& a : alarms) send_to(alarm.fd(), encode_alarm(0x1234, a));
    const int log = open_rank_log((dir_ / "rank-00005.log").string());
    const int err = ::open((dir_ / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const TeedChild child = fork_with_output_pipes("test");
    if (child.pid == 0) {
      alarm.hand_to_child();
      ::execl("/bin/sh", "sh", "-c", script, static_cast<char*>(nullptr));
      ::_exit(127);
    }
    tee_output(child, {log, err, err, alarm.fd()}, {5, 8, "node7", 1, 4, 0, "sh -c"}, "test");
    ::close(log);
    ::close(err);
    fd_ = alarm.fd();
    std::vector<std::string> lines;
    std::istringstream text(slurp(dir_ / "rank-00005.log"));
    for (std::string line; std::getline(text, line);) {
      lines.push_back(line.substr(kLogTimestampWidth + 1));
    }
    return lines;
  }
  int fd_ = -1;
};

const Alarm kRank3Lost{3, "node2", 2};

TEST_F(RankAlarmTee, ARankThatFailedBeforeReportingALossHasItReportedByItsLogger) {
  const auto lines = run("exit 255", {kRank3Lost});
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1],
            "dtrain: rank 5 ended before it could report what its logger then heard: peer process "
            "lost: rank 3 (on node2) was killed or exited without finalizing (seen by rank 2 on "
            "that node)");
  EXPECT_EQ(lines[2], "dtrain: rank 5 exited with status 255");
  EXPECT_NE(slurp(dir_ / "err").find("peer process lost: rank 3 (on node2)"), std::string::npos);
}

TEST_F(RankAlarmTee, TheRankGetsTheSocketByItsVariable) {
  const auto lines = run("echo \"fd=$DTRAIN_ALARM_FD\"; [ -e /proc/$$/fd/$DTRAIN_ALARM_FD ]", {});
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "fd=" + std::to_string(fd_));
  EXPECT_EQ(lines[2], "dtrain: rank 5 exited with status 0");  // open in the child
}

TEST_F(RankAlarmTee, NoLineWhenTheRankReportedItOrWasKilledOrTheAlarmNamesItself) {
  auto lines =
      run("echo 'dtrain: x: peer process lost: rank 3 (on node2)' >&2; exit 1", {kRank3Lost});
  EXPECT_EQ(lines.size(), 3u) << lines.back();
  lines = run("kill -9 $$", {kRank3Lost});
  EXPECT_EQ(lines.size(), 5u);  // appended: the earlier run's 3 and this one's start and exit
  EXPECT_EQ(lines.back(), "dtrain: rank 5 was killed by signal 9 (SIGKILL)");
  lines = run("exit 3", {Alarm{5, "node7", 4}});
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines.back(), "dtrain: rank 5 exited with status 3");
}

TEST_F(RankAlarmTee, ARankKilledByAWriteToAClosedConnectionIsAVictimToo) {
  const auto lines = run("kill -PIPE $$", {kRank3Lost});
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[1].find("peer process lost: rank 3 (on node2)"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[2], "dtrain: rank 5 was killed by signal 13 (SIGPIPE)");
}

TEST(RankAlarm, WaitTakesOnlyAWellFormedAlarmOfAnotherRank) {
  const RankAlarmSocket alarm = RankAlarmSocket::open();
  send_to(alarm.fd(), "hello");
  send_to(alarm.fd(), encode_alarm(7, {5, "node7", 2}));  // this rank itself
  send_to(alarm.fd(), encode_alarm(7, {9, "node2", 2}));  // not a rank of 8
  EXPECT_FALSE(wait_for_alarm(alarm.fd(), 5, 8, 50));
  send_to(alarm.fd(), encode_alarm(7, {3, "node2", 2}));
  const auto got = wait_for_alarm(alarm.fd(), 5, 8, 1000);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->lost, 3);
  EXPECT_EQ(got->reporter, 2);
  EXPECT_FALSE(wait_for_alarm(-1, 5, 8, 10));
}

}  // namespace
}  // namespace dtrain::records
