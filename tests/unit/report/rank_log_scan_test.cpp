// What one rank's log says about its end, read line by line: run-rank's start and exit lines,
// the times, the first error line, the last peer-loss line and the ranks a timeout names.
#include "report/rank_log_scan.hpp"

#include <gtest/gtest.h>

#include <string>

#include "rank_logs.hpp"

namespace dtrain::report {
namespace {

using testing::at;
using testing::exit_line;
using testing::kT0;
using testing::scan;
using testing::start;

constexpr std::int64_t kSecond = 1000000;

TEST(RankLogScan, ReadsTheStartAndExitLinesAndTheirTimes) {
  const RankLogScan s = scan(2, {at(0, start(2, 4, "node7")), at(1, "step 1"), at(2.5, "step 2"),
                                 at(3.25, exit_line(2, 0, 9))});
  EXPECT_EQ(s.rank(), 2);
  ASSERT_TRUE(s.start());
  EXPECT_EQ(s.start()->host, "node7");
  EXPECT_EQ(s.start()->world_size, 4);
  EXPECT_EQ(s.attempt(), 0);
  ASSERT_TRUE(s.exit());
  EXPECT_EQ(s.exit()->signal, 9);
  EXPECT_TRUE(s.exit()->failed());
  EXPECT_EQ(s.exit_time(), kT0 + 3250000);
  EXPECT_EQ(s.last_time(), kT0 + 3250000);
  // run-rank's own lines are not the rank's last lines; the rank's are kept whole, timestamp too.
  EXPECT_EQ(s.last_lines(), (std::vector<std::string>{at(1, "step 1"), at(2.5, "step 2")}));
  EXPECT_FALSE(s.first_error());
  EXPECT_FALSE(s.last_peer_loss());
}

TEST(RankLogScan, ALineWithoutATimestampHasThePreviousLinesTime) {
  const RankLogScan s = scan(0, {at(0, start(0)), at(4, "step"), "RuntimeError: no timestamp"});
  ASSERT_TRUE(s.first_error());
  EXPECT_EQ(s.first_error()->time, kT0 + 4 * kSecond);
  EXPECT_EQ(s.first_error()->text, "RuntimeError: no timestamp");
  EXPECT_EQ(s.last_time(), kT0 + 4 * kSecond);
  EXPECT_FALSE(s.exit());
}

TEST(RankLogScan, OutputAfterAnExitLineMeansItWasNotTheEnd) {
  const RankLogScan s = scan(0, {at(0, start(0)), at(1, exit_line(0, 1)), at(2, "still here")});
  EXPECT_FALSE(s.exit());
  EXPECT_FALSE(s.exit_time());
  EXPECT_EQ(s.last_time(), kT0 + 2 * kSecond);
}

TEST(RankLogScan, KeepsTheNewestLinesOnly) {
  const RankLogScan s = scan(0, {at(1, "a"), at(2, "b"), at(3, "c"), at(4, "d"), at(5, "e")});
  EXPECT_EQ(s.last_lines(), (std::vector<std::string>{at(3, "c"), at(4, "d"), at(5, "e")}));
}

// The first error is the one that tells what went wrong; of the peer-loss lines the last counts
// (a startup line printing a timeout setting is no evidence).
TEST(RankLogScan, KeepsTheFirstErrorLineAndTheLastPeerLossLine) {
  const RankLogScan s =
      scan(0, {at(0, start(0)), at(0.5, "config: timeout=600"), at(1, "CUDA error: out of memory"),
               at(2, "NCCL WARN connection reset by peer"), at(3, "RuntimeError: second error")});
  ASSERT_TRUE(s.first_error());
  EXPECT_EQ(s.first_error()->time, kT0 + 1 * kSecond);
  EXPECT_EQ(s.first_error()->text, "CUDA error: out of memory");
  ASSERT_TRUE(s.last_peer_loss());
  EXPECT_EQ(s.last_peer_loss()->time, kT0 + 2 * kSecond);
  EXPECT_EQ(s.last_peer_loss()->text, "NCCL WARN connection reset by peer");
  EXPECT_TRUE(s.missing_ranks().empty());
  EXPECT_FALSE(s.missing_line());
}

TEST(RankLogScan, KeepsTheRanksTheLastMissingRanksLineNames) {
  const RankLogScan s =
      scan(0, {at(0, start(0)), at(6, "dtrain: allreduce #5: tcp: missing ranks: 1, 2; timeout"),
               at(7, "dtrain: allreduce #6: not complete after 5 s; missing ranks: 3"),
               at(8, "dtrain: barrier: missing ranks: unknown (MPI does not say)")});
  EXPECT_EQ(s.missing_ranks(), std::vector<int>{3});
  ASSERT_TRUE(s.missing_line());
  EXPECT_EQ(s.missing_line()->time, kT0 + 7 * kSecond);
  EXPECT_EQ(s.missing_line()->text,
            "dtrain: allreduce #6: not complete after 5 s; missing ranks: 3");
  // The "unknown" line still reports a lost peer: it is the last one.
  ASSERT_TRUE(s.last_peer_loss());
  EXPECT_EQ(s.last_peer_loss()->time, kT0 + 8 * kSecond);
}

TEST(RankLogScan, MissingRanksAreParsedFromEveryBackendsWording) {
  EXPECT_EQ(parse_missing_ranks("dtrain: allreduce: tcp: missing ranks: 1, 2; rank 2 did not "
                                "answer"),
            (std::vector<int>{1, 2}));
  EXPECT_EQ(parse_missing_ranks("not complete after 5 s (DTRAIN_TIMEOUT); missing ranks: 3"),
            std::vector<int>{3});
  EXPECT_TRUE(parse_missing_ranks("missing ranks: unknown (MPI does not say)").empty());
  EXPECT_TRUE(parse_missing_ranks("no such words").empty());
}

// A restart appends to the same file: what the earlier attempt said no longer tells how this one
// ends.
TEST(RankLogScan, ARestartInTheSameFileStartsTheScanAgain) {
  records::RankStart again{0, 2, "node1", 0, 1, 300, "python train.py", 1};
  const RankLogScan s = scan(
      0, {at(0, start(0, 2)), at(1, "ValueError: boom"), at(1.5, "timeout"), at(2, exit_line(0, 1)),
          at(10, records::format_rank_start(again)), at(11, "step 1")});
  EXPECT_EQ(s.attempt(), 1);
  ASSERT_TRUE(s.start());
  EXPECT_EQ(s.start()->host, "node1");
  EXPECT_FALSE(s.exit());
  EXPECT_FALSE(s.first_error());
  EXPECT_FALSE(s.last_peer_loss());
  EXPECT_EQ(s.last_time(), kT0 + 11 * kSecond);
  EXPECT_EQ(s.last_lines(), std::vector<std::string>{at(11, "step 1")});
}

// `--first-error --attempt 1`: the lines of a later attempt, from its start line on, are not read,
// so the first attempt's end stays what the scan reports.
TEST(RankLogScan, UpToAnAttemptTheLaterAttemptsLinesAreNotRead) {
  records::RankStart again{0, 2, "node1", 0, 1, 300, "python train.py", 1};
  const std::vector<std::string> lines = {
      at(0, start(0, 2)),     at(1, "ValueError: boom"),
      at(2, exit_line(0, 1)), at(10, records::format_rank_start(again)),
      at(11, "step 1"),       at(12, exit_line(0, 0))};
  RankLogScan first(0, 3, 0);
  for (const auto& l : lines) first.add(l);
  EXPECT_EQ(first.attempt(), 0);
  ASSERT_TRUE(first.exit());
  EXPECT_EQ(first.exit()->status, 1);
  ASSERT_TRUE(first.first_error());
  EXPECT_EQ(first.first_error()->text, "ValueError: boom");
  EXPECT_EQ(first.last_time(), kT0 + 2 * kSecond);
  RankLogScan second(0, 3, 1);
  for (const auto& l : lines) second.add(l);
  EXPECT_EQ(second.attempt(), 1);
  ASSERT_TRUE(second.exit());
  EXPECT_EQ(second.exit()->status, 0);
  EXPECT_FALSE(second.first_error());
}

TEST(RankLogScan, ALogWithCrlfLineEndsIsReadLikeAnyOther) {
  const RankLogScan s = scan(
      0, {at(0, start(0, 2, "n3")) + "\r", at(1, "boom error\r"), at(2, exit_line(0, 1)) + "\r"});
  ASSERT_TRUE(s.start());
  EXPECT_EQ(s.start()->host, "n3");
  ASSERT_TRUE(s.exit());
  EXPECT_EQ(s.exit()->status, 1);
  ASSERT_TRUE(s.first_error());
  EXPECT_EQ(s.first_error()->text, "boom error");
  EXPECT_EQ(s.last_lines(), std::vector<std::string>{at(1, "boom error")});
}

// Issue 22, item 21: a traceback's header says nothing, and its frames quote source code, which is
// no evidence of anything; its exception line at the end is the error.
TEST(RankLogScan, APythonTracebackIsQuotedByItsExceptionLine) {
  const RankLogScan s =
      scan(0, {at(0, start(0, 2)), at(1, "Traceback (most recent call last):"),
               at(1, "  File \"train.py\", line 3, in <module>"),
               at(1, "    raise TimeoutError(\"timed out\")  # source lines are no evidence"),
               at(1.5, "ValueError: boom")});
  ASSERT_TRUE(s.first_error());
  EXPECT_EQ(s.first_error()->text, "ValueError: boom");
  EXPECT_EQ(s.first_error()->time, kT0 + 1500000);
  EXPECT_FALSE(s.last_peer_loss());
  // Chained exceptions: the first exception line (the root cause) is quoted.
  RankLogScan chained = scan(0, {at(0, "Traceback (most recent call last):"), at(0, "  File \"a\""),
                                 at(0, "KeyError: 'x'"), at(0, ""),
                                 at(0,
                                    "During handling of the above exception, another "
                                    "exception occurred:")});
  ASSERT_TRUE(chained.first_error());
  EXPECT_EQ(chained.first_error()->text, "KeyError: 'x'");
}

// Issue 45 item 9: a C++ exception leaving through a Context is announced by libdtrain, then
// printed by the program's handler or std::terminate: the rank's error is the exception, not the
// announcement.
TEST(RankLogScan, AnExceptionLeavingThroughAContextIsQuotedByTheProgramsOwnLine) {
  const std::string leaving =
      "dtrain: rank 1 of 3 (on vm): leaving the job: an exception is propagating through "
      "dtrain::Context (the program's handler, or std::terminate, prints it); the other ranks are "
      "told as this process exits, and the teardown waits for none of them";
  const RankLogScan handled =
      scan(1, {at(0, start(1, 3)), at(1, leaving),
               at(1.1,
                  "dtrain-fashion-mnist: --global-batch: expected a multiple of the 3 ranks, "
                  "got 128"),
               at(1.2, "Run with --help for more information.")});
  ASSERT_TRUE(handled.first_error());
  EXPECT_EQ(handled.first_error()->text,
            "dtrain-fashion-mnist: --global-batch: expected a multiple of the 3 ranks, got 128");
  EXPECT_EQ(handled.first_error()->time, kT0 + 1100000);
  const RankLogScan terminated =
      scan(1, {at(1, leaving),
               at(1, "terminate called after throwing an instance of 'std::runtime_error'"),
               at(1, "  what():  boom"), at(1, "later: nothing to do with it")});
  ASSERT_TRUE(terminated.first_error());
  EXPECT_EQ(terminated.first_error()->text,
            "terminate called after throwing an instance of 'std::runtime_error'; what():  boom");
  // Nothing after it (the program printed nothing, or its output was lost): the announcement.
  const RankLogScan alone = scan(1, {at(1, leaving)});
  ASSERT_TRUE(alone.first_error());
  EXPECT_EQ(alone.first_error()->text, leaving);
  // Another dtrain line next is no exception text either.
  const RankLogScan dtrain_next =
      scan(1, {at(1, leaving), at(1, "dtrain: rank 1 exited with status 1")});
  EXPECT_EQ(dtrain_next.first_error()->text, leaving);
}

// Issue 22, item 30: a 100 MB line is kept and quoted cut, not whole.
TEST(RankLogScan, AHugeLineIsCutWhenKeptAndQuoted) {
  const std::string huge = "error: " + std::string(100u << 20, 'x');
  RankLogScan s = scan(0, {at(0, start(0, 1)), at(1, huge), at(2, exit_line(0, 1))});
  ASSERT_TRUE(s.first_error());
  EXPECT_LT(s.first_error()->text.size(), kMaxQuotedLine + 64);
  EXPECT_NE(s.first_error()->text.find("more bytes cut]"), std::string::npos);
  for (const auto& l : s.last_lines()) EXPECT_LT(l.size(), kMaxQuotedLine + 64);
  // Long lines are searched in pieces: a word across a piece's end is still found.
  for (std::size_t at : {0u, 65530u, 65536u, 200000u}) {
    std::string line(at, 'x');
    line += "Segmentation FAULT";
    EXPECT_TRUE(reports_error(line)) << at;
    EXPECT_FALSE(reports_error(std::string(at + 10, 'x'))) << at;
  }
  // A cut never splits a UTF-8 character.
  EXPECT_EQ(cut_line("a\xc3\xa9", 2), "a [... 2 more bytes cut]");
  EXPECT_EQ(cut_line("short", 10), "short");
}

TEST(RankLogScan, ANoteWrittenAfterTheLaunchKeepsTheExitAndTheTimesAndNamesTheLostPeer) {
  const std::string note = records::format_lost_rank_note(
      {/*rank=*/1, /*reporter=*/2, /*lost=*/3, "node2", /*told_by=*/2, "dtrain supervise"});
  const RankLogScan s =
      scan(1, {at(0, start(1)), at(1, "step 9"), at(2, exit_line(1, 255)), at(9, note)});
  ASSERT_TRUE(s.exit());
  EXPECT_EQ(s.exit()->status, 255);
  EXPECT_EQ(s.last_time(), kT0 + 2 * kSecond);
  ASSERT_TRUE(s.lost_peer());
  EXPECT_EQ(s.lost_peer()->text, note);
  ASSERT_TRUE(s.last_peer_loss());
  EXPECT_EQ(s.last_peer_loss()->time, kT0 + 9 * kSecond);
  EXPECT_EQ(s.last_lines().back(), at(9, note));
  // The rank's own line, the first that names a lost peer, is the one kept.
  const RankLogScan own =
      scan(2, {at(0, start(2)), at(1, "x: peer process lost: rank 3 (on node2) was killed"),
               at(2, "y: peer process lost: rank 1 (on node1) was killed")});
  ASSERT_TRUE(own.lost_peer());
  EXPECT_EQ(own.lost_peer()->time, kT0 + kSecond);
}

TEST(RankLogScan, PeerLossWordsAreMatchedWhateverTheirCase) {
  EXPECT_TRUE(reports_peer_loss("NCCL WATCHDOG caught collective operation timeout"));
  EXPECT_TRUE(reports_peer_loss("Connection Reset by peer"));
  EXPECT_FALSE(reports_peer_loss("ValueError: boom"));
  EXPECT_TRUE(reports_error("Traceback (most recent call last):"));
  EXPECT_FALSE(reports_error("step 10 loss 0.25"));
}

}  // namespace
}  // namespace dtrain::report
