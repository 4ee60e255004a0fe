// The missing-rank diagnosis of the TCP communicator (comm/transport/tcp/tcp_loss.cpp): which rank
// a message names when the news of a loss passed through other ranks, and the words a user reads.
#include "comm/transport/tcp/tcp_loss.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <map>

namespace dtrain::runtime {
namespace {

using net::IoResult;

// Frames by sender; a rank without one sent nothing in time.
FrameReader frames(std::map<int, AbortFrame> sent) {
  return [sent = std::move(sent)](int peer) -> std::optional<AbortFrame> {
    auto it = sent.find(peer);
    if (it == sent.end()) return std::nullopt;
    return it->second;
  };
}

AbortFrame lost(int rank, IoResult how) {
  return AbortFrame{kAbortMagic, rank, static_cast<std::int32_t>(how), 0};
}

const std::vector<std::string> kHosts = {"a", "b", "c", "d"};
const Timeout kDeadline{std::chrono::seconds(5)};  // DTRAIN_TIMEOUT's

TEST(TcpLoss, APeerThatSentNoFrameIsTheCause) {
  const Loss seen{2, IoResult::kClosed, 0, -1};
  const Loss cause = cause_of(seen, 0, 4, frames({}));
  EXPECT_EQ(cause.rank, 2);
  EXPECT_EQ(cause.messenger, -1);
}

TEST(TcpLoss, APeerGoneWithoutAFrameDefersToTheRankTheOthersStoppedFor) {
  // 64 ranks, 37 killed: 41 stopped because of it before it accepted 9's connection, so no frame
  // from 41 reaches 9; 8 and 13, also closed, say 37.
  const Loss seen{41, IoResult::kClosed, 0, -1};
  const auto read = frames({{8, lost(37, IoResult::kClosed)}, {13, lost(37, IoResult::kClosed)}});
  const Loss cause = cause_of(seen, 9, 64, read, {1, 8, 13, 41});
  EXPECT_EQ(cause.rank, 37);
  EXPECT_EQ(cause.how, IoResult::kClosed);
  EXPECT_EQ(cause.messenger, 8);
  // Frames that blame the seen peer, or name only a silent rank, leave the seen peer the cause.
  EXPECT_EQ(cause_of(seen, 9, 64, frames({{8, lost(41, IoResult::kClosed)}}), {8, 41}).rank, 41);
  EXPECT_EQ(cause_of(seen, 9, 64, frames({{8, lost(5, IoResult::kTimeout)}}), {8, 41}).rank, 41);
  // A silent peer (seen at the deadline) is its own cause whatever the others say.
  const Loss silent{41, IoResult::kTimeout, 0, -1};
  EXPECT_EQ(cause_of(silent, 9, 64, read, {8, 13}).rank, 41);
}

TEST(TcpLoss, FramesAreFollowedToTheRankReallyLost) {
  // A ring of 3 where rank 1 stopped: rank 0 waits on 2, which waited on 1.
  const Loss seen{2, IoResult::kClosed, 0, -1};
  const Loss cause = cause_of(seen, 0, 3, frames({{2, lost(1, IoResult::kTimeout)}}));
  EXPECT_EQ(cause.rank, 1);
  EXPECT_EQ(cause.how, IoResult::kTimeout);
  EXPECT_EQ(cause.messenger, 2);
}

TEST(TcpLoss, ACycleOfFramesOrABadFrameEndsTheSearch) {
  const Loss seen{1, IoResult::kClosed, 0, -1};
  // 1 blames 2, 2 blames 1: each asked once, the last rank named before the cycle is kept.
  const Loss cycle = cause_of(
      seen, 0, 3, frames({{1, lost(2, IoResult::kClosed)}, {2, lost(1, IoResult::kClosed)}}));
  EXPECT_EQ(cycle.rank, 2);
  EXPECT_EQ(cycle.messenger, 1);
  AbortFrame garbage = lost(2, IoResult::kClosed);
  garbage.magic = 0;
  EXPECT_EQ(cause_of(seen, 0, 3, frames({{1, garbage}})).rank, 1);
  EXPECT_EQ(cause_of(seen, 0, 3, frames({{1, lost(7, IoResult::kClosed)}})).rank, 1);
  // A frame blaming the reader itself names nobody new.
  EXPECT_EQ(cause_of(seen, 0, 3, frames({{1, lost(0, IoResult::kClosed)}})).rank, 1);
}

TEST(TcpLoss, MissingRanksAreTheClosedPeersTheCauseAndItsMessenger) {
  EXPECT_EQ(missing_ranks(Loss{3, IoResult::kClosed, 0, 1}, {2}), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(missing_ranks(Loss{1, IoResult::kClosed, 0, -1}, {1, 3}), (std::vector<int>{1, 3}));
  // A silent peer this rank saw itself: only it is known missing, closed peers or not.
  EXPECT_EQ(missing_ranks(Loss{2, IoResult::kTimeout, 0, -1}, {1, 3}), (std::vector<int>{2}));
  EXPECT_EQ(missing_ranks(Loss{2, IoResult::kTimeout, 0, 3}, {1}), (std::vector<int>{1, 2, 3}));
}

TEST(TcpLoss, TheMessageNamesTheCauseItsHostAndTheMessenger) {
  EXPECT_EQ(loss_message("allreduce", Loss{1, IoResult::kClosed, 0, 2}, {1, 2}, kHosts, kDeadline),
            "dtrain: allreduce: tcp: missing ranks: 1, 2; rank 1 (on b) closed its connection (it "
            "exited or was killed); rank 2 (on c) stopped because of it");
  EXPECT_EQ(loss_message("barrier", Loss{3, IoResult::kTimeout, 0, -1}, {3}, kHosts, kDeadline),
            "dtrain: barrier: tcp: missing ranks: 3; rank 3 (on d) did not answer within 5 s "
            "(DTRAIN_TIMEOUT)");
  // A deadline the caller gave (torch's group timeout) is named as such, not as DTRAIN_TIMEOUT.
  EXPECT_EQ(loss_message("barrier", Loss{3, IoResult::kTimeout, 0, -1}, {3}, kHosts,
                         Timeout{std::chrono::milliseconds(1500), TimeoutSource::kCaller}),
            "dtrain: barrier: tcp: missing ranks: 3; rank 3 (on d) did not answer within 1.5 s "
            "(the timeout given for this group, not DTRAIN_TIMEOUT)");
  EXPECT_EQ(
      loss_message("broadcast", Loss{0, IoResult::kError, ECONNRESET, -1}, {0}, kHosts, kDeadline),
      "dtrain: broadcast: tcp: missing ranks: 0; rank 0 (on a): socket error: " +
          std::string(std::strerror(ECONNRESET)));
}

// Two ranks passed different calls: the rank that saw it stops every rank with a frame naming
// both calls; a rank that learns it from a peer that stopped, directly or through another rank's
// copy of the frame, names both calls too, and which rank saw it, and no rank is missing.
TEST(TcpLoss, AFrameOfDifferentCallsIsTheCauseWhereverItComesFrom) {
  Loss seen_by_2{2, IoResult::kMismatch, 0, -1};
  seen_by_2.calls = {{1, 4097, CallWhat{}}, {2, 4096, CallWhat{}}};
  const AbortFrame f = frame_of_loss(seen_by_2);
  // Rank 0 sees rank 2 close; rank 3 sees rank 1, which stopped for rank 2's frame (a copy).
  for (const auto& [self, peer] : {std::pair{0, 2}, std::pair{3, 1}}) {
    SCOPED_TRACE("rank " + std::to_string(self));
    const Loss cause =
        cause_of(Loss{peer, IoResult::kClosed, 0, -1}, self, 4, frames({{peer, f}}), {peer});
    EXPECT_EQ(cause.how, IoResult::kMismatch);
    EXPECT_EQ(cause.rank, 2);
    EXPECT_EQ(cause.messenger, peer);
    EXPECT_TRUE(missing_ranks(cause, {peer}).empty());
    EXPECT_EQ(loss_message("allreduce", cause, {}, kHosts, kDeadline),
              "dtrain: allreduce: tcp: ranks passed different calls to one collective: rank 1 "
              "passed 4097 float32 elements (sum), rank 2 passed 4096 float32 elements (sum); "
              "every rank must pass the same number of elements, element type and operation; "
              "rank 2 (on c) saw it");
  }
  // The rank that saw it says no more than the calls.
  EXPECT_EQ(loss_message("barrier", seen_by_2, {}, kHosts, kDeadline).find("saw it"),
            std::string::npos);
}

}  // namespace
}  // namespace dtrain::runtime
