// The peer alarm's words, shared by the ranks and their loggers: a logger, which never learns the
// job's token, takes an alarm of any token; the sentence that names a lost peer, in its three
// forms.
#include "common/alarm_datagram.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace dtrain {
namespace {

TEST(AlarmDatagram, WithoutATokenAnyJobsWellFormedAlarmIsTaken) {
  const std::string datagram = encode_alarm(0xfeed, {3, "node2", 2});
  EXPECT_FALSE(decode_alarm(datagram, 0xbeef, 4));
  const auto any = decode_alarm(datagram, std::nullopt, 4);
  ASSERT_TRUE(any);
  EXPECT_EQ(any->lost, 3);
  EXPECT_EQ(any->lost_host, "node2");
  EXPECT_EQ(any->reporter, 2);
  EXPECT_FALSE(decode_alarm(datagram, std::nullopt, 3));  // rank 3 is not one of 3
  EXPECT_FALSE(decode_alarm("dtrain-peer-lost 1\nxyz\n3\n2\nnode2", std::nullopt, 4));
}

TEST(AlarmDatagram, TheLostPeerSentence) {
  EXPECT_EQ(lost_peer_text(3, "node2", 2),
            "peer process lost: rank 3 (on node2) was killed or exited without finalizing (seen by "
            "rank 2 on that node)");
  EXPECT_EQ(lost_peer_text(1, "", -1),
            "peer process lost: rank 1 (on this node) was killed or exited without finalizing");
  EXPECT_EQ(lost_peer_text(4, "node3", 4),
            "peer process lost: rank 4 (on node3) left the job after an error, without finalizing "
            "(its own output says which)");
}

TEST(AlarmDatagram, TheLostPeerSentenceIsReadBackFromAnyLineQuotingIt) {
  for (const auto& [lost, host, told_by] :
       std::vector<std::tuple<int, std::string, int>>{{3, "node2", 2}, {1, "", -1}, {4, "n3", 4}}) {
    const auto peer = parse_lost_peer_text("dtrain: allreduce #9 (4096 bytes, mpi, rank 0 of 8): " +
                                           lost_peer_text(lost, host, told_by) +
                                           "; this rank's collectives fail");
    ASSERT_TRUE(peer) << lost;
    EXPECT_EQ(peer->lost, lost);
    EXPECT_EQ(peer->host, host);
    EXPECT_EQ(peer->told_by, told_by);
  }
  EXPECT_FALSE(parse_lost_peer_text("step 10 loss 0.25"));
  EXPECT_FALSE(parse_lost_peer_text("peer process lost: rank x (on node2) was killed or exited"));
  EXPECT_FALSE(parse_lost_peer_text("peer process lost: rank 3 (on node2"));
  EXPECT_FALSE(
      parse_lost_peer_text("peer process lost: rank 3 (on no de) was killed or exited "
                           "without finalizing"));
  EXPECT_FALSE(parse_lost_peer_text("peer process lost: rank 3 (on node2) went away"));
  EXPECT_FALSE(
      parse_lost_peer_text("peer process lost: rank 3 (on node2) was killed or exited "
                           "without finalizing (seen by rank x on that node)"));
}

}  // namespace
}  // namespace dtrain
