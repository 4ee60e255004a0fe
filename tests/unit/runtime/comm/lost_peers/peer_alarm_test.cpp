// The peer alarm: what a rank that saw a peer of its node end sends to the ranks of other nodes,
// what those accept (this job's alarms only, well formed), whom it is sent to, and the datagram's
// way over a real socket.
#include "comm/lost_peers/peer_alarm.hpp"

#include <gtest/gtest.h>
#include <poll.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loopback_job.hpp"

namespace {

using dtrain::runtime::Alarm;
using dtrain::runtime::AlarmEndpoint;
using dtrain::runtime::decode_alarm;
using dtrain::runtime::encode_alarm;
using dtrain::runtime::PeerProcess;
using dtrain::test::LoopbackJob;

constexpr std::uint64_t kToken = 0x0123456789abcdefULL;

TEST(PeerAlarmFormat, AnAlarmOfThisJobDecodesAsSent) {
  const std::string datagram = encode_alarm(kToken, {3, "node2", 2});
  EXPECT_EQ(datagram, "dtrain-peer-lost 1\n0123456789abcdef\n3\n2\nnode2");
  const std::optional<Alarm> alarm = decode_alarm(datagram, kToken, 4);
  ASSERT_TRUE(alarm);
  EXPECT_EQ(alarm->lost, 3);
  EXPECT_EQ(alarm->lost_host, "node2");
  EXPECT_EQ(alarm->reporter, 2);
}

// A rank leaving the job after an error (Context::abort) reports itself.
TEST(PeerAlarmFormat, ARankMayReportItself) {
  const std::optional<Alarm> alarm = decode_alarm(encode_alarm(kToken, {3, "node2", 3}), kToken, 4);
  ASSERT_TRUE(alarm);
  EXPECT_EQ(alarm->lost, 3);
  EXPECT_EQ(alarm->reporter, 3);
}

TEST(PeerAlarmFormat, AnotherJobsAlarmIsIgnored) {
  EXPECT_FALSE(decode_alarm(encode_alarm(kToken + 1, {3, "node2", 2}), kToken, 4));
}

TEST(PeerAlarmFormat, MalformedDatagramsAreIgnored) {
  const std::string good = encode_alarm(kToken, {3, "node2", 2});
  const std::vector<std::string> bad = {
      "",
      good.substr(0, good.size() - 6),                            // cut before the host
      good + "\n",                                                // a sixth field
      "dtrain-peer-lost 2" + good.substr(18),                     // another version
      encode_alarm(kToken, {4, "node2", 2}),                      // rank 4 in a job of 4
      encode_alarm(kToken, {-1, "node2", 2}),                     // a negative rank
      encode_alarm(kToken, {3, "", 2}),                           // no host
      encode_alarm(kToken, {3, "node 2", 2}),                     // not a host name
      encode_alarm(kToken, {3, "node2\x1b[2J", 2}),               // a terminal escape
      encode_alarm(kToken, {3, std::string(256, 'n'), 2}),        // a host too long
      "dtrain-peer-lost 1\n0123456789ABCDEF\n3\n2\nnode2",        // the token in upper case
      "dtrain-peer-lost 1\n0123456789abcdef\n+3\n2\nnode2",       // a signed rank
      "dtrain-peer-lost 1\n0123456789abcdef\n3 \n2\nnode2",       // a space after a rank
      "dtrain-peer-lost 1\n0123456789abcdef\n99999999999\n2\nx",  // a rank beyond int
  };
  for (const std::string& datagram : bad) {
    EXPECT_FALSE(decode_alarm(datagram, kToken, 4)) << "accepted: " << datagram;
  }
}

TEST(PeerAlarmFormat, EndpointRecordsCarryHostAndPort) {
  const std::string record = dtrain::runtime::encode_alarm_endpoint({"node2", 40123});
  ASSERT_EQ(record.size(), dtrain::runtime::kAlarmEndpointBytes);
  const AlarmEndpoint back = dtrain::runtime::decode_alarm_endpoint(record.data());
  EXPECT_EQ(back.host, "node2");
  EXPECT_EQ(back.port, 40123);
  // A host that does not fit is dropped whole: a cut name could be another machine's.
  const std::string long_host(dtrain::runtime::kAlarmEndpointBytes, 'n');
  const std::string too_long = dtrain::runtime::encode_alarm_endpoint({long_host, 40123});
  EXPECT_EQ(dtrain::runtime::decode_alarm_endpoint(too_long.data()).port, 0);
  const std::string junk(dtrain::runtime::kAlarmEndpointBytes, 'x');
  EXPECT_EQ(dtrain::runtime::decode_alarm_endpoint(junk.data()).port, 0);
}

TEST(PeerAlarmTargets, EveryRankButTheSender) {
  // Ranks on the sender's node watch the same processes, but may see the sender end too.
  const PeerProcess self{2, 102, "boot/ns1", "node1"};
  EXPECT_EQ(dtrain::runtime::alarm_targets(6, self), (std::vector<int>{0, 1, 3, 4, 5}));
  EXPECT_EQ(dtrain::runtime::alarm_targets(1, {0, 100, "boot/ns1", "node1"}), std::vector<int>{});
}

bool readable(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, ms) > 0;
}

TEST(PeerAlarm, AnAlarmReachesTheTargetsAndStrayDatagramsAreDropped) {
  LoopbackJob job(3, kToken);
  const auto sender = job.alarm(0, {1});
  const auto target = job.alarm(1, {0});
  const auto bystander = job.alarm(2, {0});
  EXPECT_EQ(sender->reachable(), 1u);
  job.send_raw(1, encode_alarm(kToken + 1, {2, "node9", 0}));  // another job's
  job.send_raw(1, "GET / HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(readable(target->fd(), 2000));
  EXPECT_FALSE(target->receive()) << "a datagram of another job or of nothing was taken";
  sender->send({2, "node1", 0});
  ASSERT_TRUE(readable(target->fd(), 2000)) << "the alarm did not arrive";
  const std::optional<Alarm> got = target->receive();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->lost, 2);
  EXPECT_EQ(got->lost_host, "node1");
  EXPECT_EQ(got->reporter, 0);
  EXPECT_FALSE(readable(bystander->fd(), 50)) << "sent to a rank not among the targets";
}

TEST(PeerAlarm, ARankWhoseHostDoesNotResolveIsLeftOut) {
  LoopbackJob job(2, kToken);
  std::vector<AlarmEndpoint> endpoints = job.endpoints();
  endpoints[1].host = "no-such-host.invalid";  // RFC 6761: never resolves
  dtrain::runtime::PeerAlarm alarm(dtrain::runtime::net::bind_udp(), kToken, 2, endpoints, {1});
  EXPECT_EQ(alarm.reachable(), 0u);
  alarm.send({0, "node1", 1});  // nothing to send to, and no error
}

}  // namespace
