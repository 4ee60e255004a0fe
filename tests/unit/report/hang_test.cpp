// --hang on synthetic heartbeats: the collective some ranks never entered, with each rank's times.
#include "report/hang.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "heartbeats.hpp"
#include "records/log_line.hpp"
#include "records/metric_record.hpp"
#include "report/first_error.hpp"

namespace dtrain::report {
namespace {

using testing::coll;

TEST(Hang, ARankThatStopsBeforeACollectiveIsNamedWithTheTimes) {
  HeartbeatTracker t;
  for (int r = 0; r < 4; ++r) t.add_rank(r, "node" + std::to_string(r / 2));
  for (int r = 0; r < 4; ++r) {
    for (int k = 0; k < 3; ++k) {
      t.add(coll(r, k, true, k + 0.01 * r));
      t.add(coll(r, k, false, k + 0.5));
    }
    if (r != 2) t.add(coll(r, 3, true, 3 + 0.01 * r));  // rank 2 never arrives at #3
  }
  const HangReport h = detect_hang(t);
  ASSERT_TRUE(h.missed_seq);
  EXPECT_EQ(*h.missed_seq, 3);
  EXPECT_EQ(h.missed_what, "allreduce of 4096 bytes");
  ASSERT_EQ(h.never_entered.size(), 1u);
  EXPECT_EQ(h.never_entered[0].rank, 2);
  EXPECT_EQ(h.never_entered[0].left, 2);
  EXPECT_EQ(h.reached.size(), 3u);
  EXPECT_EQ(h.stuck.size(), 3u);  // the others wait inside #3
  const std::string text = format_hang(h);
  EXPECT_NE(text.find("hang: rank 2 never entered collective #3 (allreduce of 4096 bytes) that "
                      "ranks 0-1,3 reached"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 2 on node1: last entered #2 at 2026-11-22T10:00:02.020000Z, left it at "
                      "2026-11-22T10:00:02.500000Z"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 0 on node0: entered #3 at 2026-11-22T10:00:03.000000Z, never left it"),
            std::string::npos)
      << text;
  EXPECT_EQ(hang_to_json(h)["never_entered"][0]["rank"], 2);
}

// The Meter's thread samples resources while the training thread hangs: those records say the
// process lived, not that training moved, so a rank's last record stays its last heartbeat.
TEST(Hang, ResourceSamplesAreNoSignOfProgress) {
  HeartbeatTracker t;
  for (int r = 0; r < 2; ++r) t.add_rank(r, "node0");
  t.add(coll(0, 0, true, 1.0));
  t.add(coll(1, 0, true, 1.0));
  t.add(coll(1, 0, false, 1.5));
  t.add(testing::resource(0, 30.0, 5.0, 100.0, 1 << 20));
  const HangReport h = detect_hang(t);
  EXPECT_EQ(t.ranks().at(0).last_record, records::unix_seconds_to_micros(1795341601.0));
  EXPECT_EQ(t.ranks().at(0).entered, 0);
  EXPECT_EQ(h.stuck.size(), 1u);
}

// Issue 22, item 24: ranks 0 and 2 give up on #5 waiting for the stopped rank 1, which the
// launcher's SIGCONT wakes into #5 after they failed. Their exit records say "failed".
TEST(Hang, ACollectiveThatFailedAndTheRankThatEnteredItLateAreNamed) {
  HeartbeatTracker t;
  for (int r = 0; r < 3; ++r) {
    t.add_rank(r, "node0");
    t.add(coll(r, 4, true, 0.5));
    t.add(coll(r, 4, false, 0.6));
  }
  for (int r : {0, 2}) {
    t.add(coll(r, 5, true, 1));
    records::MetricRecord failed = coll(r, 5, false, 6 + 0.1 * r);
    failed.failed = true;
    t.add(failed);
  }
  t.add(coll(1, 5, true, 9));
  const HangReport h = detect_hang(t);
  EXPECT_FALSE(h.missed_seq);  // everyone entered #5 in the end
  ASSERT_TRUE(h.failed_seq);
  EXPECT_EQ(*h.failed_seq, 5);
  ASSERT_EQ(h.failed.size(), 2u);
  EXPECT_EQ(h.failed[0].rank, 0);
  EXPECT_EQ(h.failed[1].rank, 2);
  ASSERT_EQ(h.late.size(), 1u);
  EXPECT_EQ(h.late[0].rank, 1);
  const std::string text = format_hang(h);
  EXPECT_NE(text.find("failed: collective #5 (allreduce of 4096 bytes) failed on ranks 0,2; rank "
                      "1 had not entered it when it failed there"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 1 on node0: entered it only at 2026-11-22T10:00:09.000000Z"),
            std::string::npos)
      << text;
  EXPECT_EQ(hang_to_json(h)["late"][0]["rank"], 1);
}

// Issue 45 item 3: the stopped rank 1, woken by the launcher after ranks 0 and 2 gave up on #5,
// enters #5 and fails it too (its peers are gone): it is the late rank, not one more that failed
// waiting, and the headline names it (the old reading: "no hang", ranks 0-2 failed).
TEST(Hang, ALateRankThatFailsTheCollectiveItReachedLateIsStillTheLateOne) {
  HeartbeatTracker t;
  for (int r = 0; r < 3; ++r) {
    t.add_rank(r, "node0");
    t.add(coll(r, 4, true, 0.5));
    t.add(coll(r, 4, false, 0.6));
    t.add(coll(r, 5, true, r == 1 ? 6.3 : 1));
    records::MetricRecord failed = coll(r, 5, false, r == 1 ? 6.31 : 6 + 0.01 * r);
    failed.failed = true;
    t.add(failed);
  }
  const HangReport h = detect_hang(t);
  EXPECT_FALSE(h.missed_seq);
  EXPECT_TRUE(h.stuck.empty());
  ASSERT_TRUE(h.failed_seq);
  ASSERT_EQ(h.failed.size(), 2u);
  EXPECT_EQ(h.failed[0].rank, 0);
  EXPECT_EQ(h.failed[1].rank, 2);
  ASSERT_EQ(h.late.size(), 1u);
  EXPECT_EQ(h.late[0].rank, 1);
  const std::string text = format_hang(h);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "hang: rank 1 entered collective #5 (allreduce of 4096 bytes) only after it had failed "
            "on ranks 0,2, which waited for it")
      << text;
  EXPECT_EQ(text.find("no hang"), std::string::npos) << text;
  const auto missed = missed_collective(h);
  ASSERT_TRUE(missed);
  EXPECT_TRUE(missed->late);
  EXPECT_EQ(missed->ranks, std::vector<int>{1});
}

// A restarted job's files hold every attempt's heartbeats, numbered from 0 again each time: only
// the last attempt's count. Attempt 0 alone would blame rank 1 (it stopped at #5 while rank 0
// reached #10); in attempt 1 rank 0 is the one that stopped.
TEST(Hang, OnlyTheLastAttemptsHeartbeatsCount) {
  HeartbeatTracker t;
  t.add_rank(0, "node0");
  t.add_rank(1, "node1");
  const auto in_attempt = [](records::MetricRecord r, int attempt) {
    r.attempt = attempt;
    return r;
  };
  for (int k = 0; k <= 10; ++k) t.add(coll(0, k, true, k));
  for (int k = 0; k <= 5; ++k) t.add(coll(1, k, true, k));
  for (int k = 0; k <= 2; ++k) t.add(in_attempt(coll(0, k, true, 100 + k), 1));
  for (int k = 0; k <= 3; ++k) t.add(in_attempt(coll(1, k, true, 100 + k), 1));
  t.add(coll(1, 6, true, 50));  // a late record of attempt 0 (rank files are read one by one)
  EXPECT_EQ(t.attempt(), 1);
  const HangReport h = detect_hang(t);
  ASSERT_TRUE(h.missed_seq);
  EXPECT_EQ(*h.missed_seq, 3);
  ASSERT_EQ(h.never_entered.size(), 1u);
  EXPECT_EQ(h.never_entered[0].rank, 0);
  EXPECT_EQ(h.never_entered[0].host, "node0");

  // Told the job's last attempt is 2, which wrote no heartbeat yet: nothing of 0 or 1 is evidence.
  HeartbeatTracker later(2);
  later.add(in_attempt(coll(0, 4, true, 1), 1));
  EXPECT_FALSE(detect_hang(later).heartbeats);
}

TEST(Hang, AllEnteredButSomeNeverLeftAndMismatchesAreReported) {
  HeartbeatTracker t;
  t.add(coll(0, 0, true, 0));
  t.add(coll(1, 0, true, 0, "broadcast", 8));
  t.add(coll(0, 0, false, 1));
  const HangReport h = detect_hang(t);
  EXPECT_FALSE(h.missed_seq);
  ASSERT_EQ(h.stuck.size(), 1u);
  EXPECT_EQ(h.stuck[0].rank, 1);
  EXPECT_EQ(h.mismatched.size(), 2u);
  const std::string text = format_hang(h);
  EXPECT_NE(text.find("every rank entered collective #0; rank 1 never left it"), std::string::npos)
      << text;
  HeartbeatTracker none;
  none.add_rank(0, "h");
  EXPECT_FALSE(detect_hang(none).heartbeats);
}

}  // namespace
}  // namespace dtrain::report
