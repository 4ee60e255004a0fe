// --first-error on synthetic rank logs: the culprit is the rank that exited or went silent first
// (or, with heartbeats, never reached a collective); victims are listed as such.
#include "report/first_error.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "heartbeats.hpp"
#include "rank_logs.hpp"
#include "report/unreadable_logs.hpp"

namespace dtrain::report {
namespace {

using testing::at;
using testing::exit_line;
using testing::kT0;
using testing::scan;
using testing::start;

TEST(FirstError, TheRankThatExitedFirstIsTheCulpritAndLaterOnesAreVictims) {
  std::vector<RankLogScan> scans = {
      scan(0,
           {at(0, start(0)), at(1, "step 1"),
            at(5.2, "RuntimeError: NCCL watchdog timeout: peer closed"), at(5.3, exit_line(0, 1))}),
      scan(1, {at(0, start(1)), at(1, "step 1"), at(2, "step 2"),
               at(3, "CUDA error: an illegal memory access"), at(3.1, exit_line(1, 0, 6))}),
      scan(2, {at(0, start(2)), at(1, "step 1"), at(6, exit_line(2, 0, 15))}),
      scan(3, {at(0, start(3)), at(9, "done"), at(9.1, exit_line(3, 0))}),
  };
  const auto r = find_first_error(scans, {}, std::nullopt);
  ASSERT_TRUE(r.culprit);
  EXPECT_EQ(r.culprit->rank, 1);
  EXPECT_EQ(r.culprit->how, "was killed by signal 6 (SIGABRT)");
  EXPECT_EQ(r.culprit_reason, "exited first");
  ASSERT_TRUE(r.culprit->evidence);
  EXPECT_EQ(r.culprit->evidence->text, "CUDA error: an illegal memory access");
  EXPECT_EQ(r.culprit->last_lines.back(), at(3, "CUDA error: an illegal memory access"));
  ASSERT_EQ(r.victims.size(), 2u);
  EXPECT_EQ(r.victims[0].rank, 0);
  EXPECT_TRUE(r.victims[0].peer_loss);
  EXPECT_EQ(r.victims[1].rank, 2);
  EXPECT_EQ(r.finished, std::vector<int>{3});
  const std::string text = format_first_error(r);
  EXPECT_NE(text.find("victims (2 ranks failed after rank 1):\n"), std::string::npos) << text;
  EXPECT_NE(text.find("first failure: rank 1 on node0 was killed by signal 6 (SIGABRT) at "
                      "2026-11-22T10:00:03.100000Z"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("rank 0 on node0 exited with status 1 at 2026-11-22T10:00:05.300000Z (2.200 s "
                "later): reports RuntimeError: NCCL watchdog timeout: peer closed"),
      std::string::npos)
      << text;
  EXPECT_EQ(first_error_to_json(r)["culprit"]["rank"], 1);
}

TEST(FirstError, ARankThatWentSilentBeforeTheOthersFailedIsTheCulprit) {
  // Rank 2's run-rank was killed with it: no exit line, its log ends at 1.5 s. The others time
  // out much later. A startup line mentioning a timeout does not make rank 2 a victim.
  std::vector<RankLogScan> scans = {
      scan(0,
           {at(0, start(0)), at(1, "step"), at(601, "Watchdog caught collective operation timeout"),
            at(601.5, exit_line(0, 1))}),
      scan(1, {at(0, start(1)), at(1, "step"), at(601.2, "connection reset by peer"),
               at(601.6, exit_line(1, 1))}),
      scan(2, {at(0, start(2)), at(0.5, "config: timeout=600"), at(1.5, "step")}),
  };
  const auto r = find_first_error(scans, {}, std::nullopt);
  ASSERT_TRUE(r.culprit);
  EXPECT_EQ(r.culprit->rank, 2);
  EXPECT_EQ(r.culprit->kind, RankEnd::Kind::kSilent);
  EXPECT_EQ(r.culprit->time, kT0 + 1500000);
  EXPECT_EQ(r.culprit_reason, "went silent first");
  ASSERT_EQ(r.victims.size(), 2u);
  EXPECT_TRUE(r.victims[0].peer_loss && r.victims[1].peer_loss);
}

TEST(FirstError, ARankLostRightAfterItsStartLineWentSilentWhenItStarted) {
  // A node lost during startup: ranks 2 and 3 logged only their start lines. Their time is that
  // line's, not the epoch, and the victims' intervals are seconds, not decades.
  std::vector<RankLogScan> scans = {
      scan(0, {at(0, start(0)),
               at(25,
                  "dtrain: allreduce #3 (4 bytes, mpi, rank 0 of 4): not "
                  "complete after 20 s (DTRAIN_TIMEOUT)"),
               at(25.1, exit_line(0, 1))}),
      scan(1, {at(0.1, start(1)),
               at(25.1, "dtrain: allreduce #3: not complete after 20 s (DTRAIN_TIMEOUT)"),
               at(25.2, exit_line(1, 1))}),
      scan(2, {at(0.2, start(2, 4, "node2"))}),
      scan(3, {at(0.3, start(3, 4, "node2"))}),
  };
  const auto r = find_first_error(scans, {}, std::nullopt);
  ASSERT_TRUE(r.culprit);
  EXPECT_EQ(r.culprit->rank, 2);
  EXPECT_EQ(r.culprit->host, "node2");
  EXPECT_EQ(r.culprit->time, kT0 + 200000);
  const std::string text = format_first_error(r);
  EXPECT_NE(text.find("rank 3 on node2 went silent (its log has no exit line from dtrain "
                      "run-rank) at 2026-11-22T10:00:00.300000Z (0.100 s later)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(24.900 s later)"), std::string::npos) << text;
}

TEST(FirstError, ARankThatFailedOnItsOwnBeatsAnIdleRankThatLostItsExitLine) {
  // Rank 2 is SIGKILLed at 1.0 s; mpirun stops the others, and rank 0's run-rank is killed before
  // it can write its exit line, so its log ends at its last output (0.9 s), before rank 2 died.
  std::vector<RankLogScan> scans = {
      scan(0, {at(0, start(0)), at(0.9, "step 5")}),
      scan(1, {at(0, start(1)), at(0.9, "step 5"), at(2.1, exit_line(1, 0, 15))}),
      scan(2, {at(0, start(2)), at(0.95, "about to die"), at(1.0, exit_line(2, 0, 9))}),
      scan(3, {at(0, start(3)), at(0.9, "step 5"), at(2.1, exit_line(3, 0, 15))}),
  };
  const auto r = find_first_error(scans, {}, std::nullopt);
  ASSERT_TRUE(r.culprit);
  EXPECT_EQ(r.culprit->rank, 2);
  EXPECT_EQ(r.culprit_reason, "exited first");
  ASSERT_EQ(r.victims.size(), 3u);
  EXPECT_EQ(r.victims[0].rank, 0);
  EXPECT_EQ(r.victims[0].kind, RankEnd::Kind::kSilent);
  // Rank 0's log ends before rank 2 died: the report says so instead of a negative "later", and
  // the header does not claim that every victim failed after the culprit.
  const std::string text = format_first_error(r);
  EXPECT_NE(text.find("victims (3 other failing ranks; rank 2 is the culprit):\n"
                      "  rank 0 on node0 went silent (its log has no exit line from dtrain "
                      "run-rank) at 2026-11-22T10:00:00.900000Z (0.100 s earlier)\n"
                      "  [ranks 1,3 @ node0] was killed by signal 15 (SIGTERM) at "
                      "2026-11-22T10:00:02.100000Z (1.100 s later)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("-0."), std::string::npos) << text;
}

TEST(FirstError, OneVictimIsCountedInTheSingular) {
  std::vector<RankLogScan> scans = {
      scan(0, {at(0, start(0, 2)), at(1, "boom error"), at(1.5, exit_line(0, 1))}),
      scan(1, {at(0, start(1, 2)), at(2, "connection reset by peer"), at(2.5, exit_line(1, 1))}),
  };
  const std::string text = format_first_error(find_first_error(scans, {}, std::nullopt));
  EXPECT_NE(text.find("victims (1 rank failed after rank 0):\n  rank 1 on node0 exited with status "
                      "1 at 2026-11-22T10:00:02.500000Z (1.000 s later): reports connection "
                      "reset by peer\n"),
            std::string::npos)
      << text;
}

TEST(FirstError, HeartbeatsNameTheRankThatNeverReachedTheCollective) {
  // Rank 1 hung in compute and was later killed by the scheduler like everyone else; only the
  // heartbeats tell it apart.
  std::vector<RankLogScan> scans = {
      scan(0, {at(0, start(0, 2)), at(700, exit_line(0, 0, 15))}),
      scan(1, {at(0, start(1, 2)), at(700.1, exit_line(1, 0, 15))}),
  };
  const MissedCollective missed{5, "allreduce of 4096 bytes", {1}};
  const auto r = find_first_error(scans, {}, missed);
  ASSERT_TRUE(r.culprit);
  EXPECT_EQ(r.culprit->rank, 1);
  EXPECT_EQ(r.culprit_reason,
            "never entered collective #5 (allreduce of 4096 bytes) that the other ranks entered");
}

// Issue 22, item 24: rank 1 was stopped (SIGSTOP); ranks 0 and 2 time out in allreduce #5 naming
// it and exit first; Open MPI sends SIGCONT before it kills the job, so rank 1 wakes, finds its
// peers gone and exits last. The victims' "missing ranks: 1" outranks the exit order.
std::vector<RankLogScan> stopped_rank_woken_late() {
  const std::string timeout = ": not complete after 5 s (DTRAIN_TIMEOUT); missing ranks: 1";
  return {
      scan(0, {at(0, start(0, 3)), at(1, "step 1"),
               at(6, "dtrain: allreduce #5 (4096 bytes, rank 0 of 3)" + timeout),
               at(6.1, exit_line(0, 1))}),
      scan(1, {at(0, start(1, 3)), at(1, "step 1"),
               at(9,
                  "dtrain: allreduce #5 (4096 bytes, rank 1 of 3): tcp: peer closed the "
                  "connection; missing ranks: 0, 2"),
               at(9.2, exit_line(1, 0, 9))}),
      scan(2, {at(0, start(2, 3)), at(1, "step 1"),
               at(6.05, "dtrain: allreduce #5 (4096 bytes, rank 2 of 3)" + timeout),
               at(6.3, exit_line(2, 1))}),
  };
}

TEST(FirstError, TheRankTheVictimsNameAsMissingIsTheCulpritThoughItExitedLast) {
  const auto r = find_first_error(stopped_rank_woken_late(), {}, std::nullopt);
  ASSERT_TRUE(r.culprit);
  EXPECT_EQ(r.culprit->rank, 1);
  EXPECT_EQ(r.culprit_reason, "the other failing ranks' errors name it as missing");
  ASSERT_EQ(r.victims.size(), 2u);
  EXPECT_EQ(r.victims[0].rank, 0);
  EXPECT_TRUE(r.victims[0].peer_loss);
  EXPECT_EQ(r.victims[1].rank, 2);
  EXPECT_TRUE(r.same_error.empty());
  const std::string text = format_first_error(r);
  EXPECT_NE(text.find("victims (2 other failing ranks; rank 1 is the culprit):\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(3.100 s earlier): reports dtrain: allreduce #5 (4096 bytes, rank 0 of 3): "
                      "not complete after 5 s (DTRAIN_TIMEOUT); missing ranks: 1"),
            std::string::npos)
      << text;
  // Issue 45 item 9: rank 1's own error, written once woken, names the innocent ranks 0 and 2: it
  // is quoted as what it is, and the one-line verdict gives the reason instead.
  EXPECT_TRUE(r.culprit_error_after_others);
  EXPECT_NE(text.find("  its error once the others had given up on it (it names them, not the "
                      "cause) (2026-11-22T10:00:09.000000Z): dtrain: allreduce #5"),
            std::string::npos)
      << text;
  EXPECT_EQ(
      summarize_first_error(r),
      "rank 1 on node0 was killed by signal 9 (SIGKILL): the other failing ranks' errors name "
      "it as missing");
}

TEST(FirstError, HeartbeatsOfACollectiveEnteredAfterItFailedNameTheLateRank) {
  HeartbeatTracker t;
  for (int r = 0; r < 3; ++r) {
    t.add_rank(r, "node0");
    t.add(testing::coll(r, 4, true, 0.5));
    t.add(testing::coll(r, 4, false, 0.6));
  }
  for (int r : {0, 2}) {
    t.add(testing::coll(r, 5, true, 1));
    auto failed = testing::coll(r, 5, false, 6);
    failed.failed = true;
    t.add(failed);
  }
  t.add(testing::coll(1, 5, true, 9));  // woken by SIGCONT, then killed inside #5
  const auto missed = missed_collective(detect_hang(t));
  ASSERT_TRUE(missed);
  EXPECT_EQ(missed->ranks, std::vector<int>{1});
  EXPECT_TRUE(missed->late);
  // The logs alone, without a "missing ranks" line, would blame rank 0, which exited first.
  std::vector<RankLogScan> scans = {
      scan(0,
           {at(0, start(0, 3)), at(6, "RuntimeError: allreduce failed"), at(6.1, exit_line(0, 1))}),
      scan(1, {at(0, start(1, 3)), at(9.2, exit_line(1, 0, 9))}),
      scan(2,
           {at(0, start(2, 3)), at(6, "RuntimeError: allreduce failed"), at(6.3, exit_line(2, 1))}),
  };
  const auto r = find_first_error(scans, {}, missed);
  ASSERT_TRUE(r.culprit);
  EXPECT_EQ(r.culprit->rank, 1);
  EXPECT_EQ(r.culprit_reason,
            "entered collective #5 (allreduce of 4096 bytes) only after it had failed on the ranks "
            "that waited for it");
}

TEST(FirstError, TwoRanksNamingEachOtherBlameTheOneNamedFirst) {
  // Two ranks: rank 0 times out waiting for the stopped rank 1; rank 1, woken later, names 0.
  std::vector<RankLogScan> scans = {
      scan(0, {at(0, start(0, 2)), at(6, "dtrain: allreduce #5: tcp: missing ranks: 1; timeout"),
               at(6.1, exit_line(0, 1))}),
      scan(1,
           {at(0, start(1, 2)), at(9, "dtrain: allreduce #5: tcp: missing ranks: 0; peer closed"),
            at(9.1, exit_line(1, 1))}),
  };
  const auto r = find_first_error(scans, {}, std::nullopt);
  ASSERT_TRUE(r.culprit);
  EXPECT_EQ(r.culprit->rank, 1);
}

TEST(FirstError, NoFailureWhenEveryRankExitedCleanlyOrIsStillRunning) {
  std::vector<RankLogScan> done = {scan(0, {at(0, start(0, 2)), at(1, exit_line(0, 0))}),
                                   scan(1, {at(0, start(1, 2)), at(1, exit_line(1, 0))})};
  auto r = find_first_error(done, {}, std::nullopt);
  EXPECT_FALSE(r.culprit);
  EXPECT_EQ(format_first_error(r), "no rank failed: 2 of 2 ranks exited with status 0\n");
  std::vector<RankLogScan> running = {scan(0, {at(0, start(0, 1)), at(1, "step")})};
  r = find_first_error(running, {}, std::nullopt);
  EXPECT_FALSE(r.culprit);
  EXPECT_EQ(r.running, std::vector<int>{0});
}

TEST(FirstError, ARestartInTheSameFileCountsOnlyTheLastAttempt) {
  std::vector<RankLogScan> scans = {
      scan(0, {at(0, start(0, 1)), at(1, "boom error"), at(2, exit_line(0, 1)), at(10, start(0, 1)),
               at(11, "fine"), at(12, exit_line(0, 0))})};
  EXPECT_FALSE(find_first_error(scans, {}, std::nullopt).culprit);
}

// Issue 22, item 21: a traceback's header says nothing; its exception line at the end does.
TEST(FirstError, APythonTracebackIsQuotedByItsExceptionLine) {
  std::vector<RankLogScan> scans = {
      scan(0, {at(0, start(0, 2)), at(1, "Traceback (most recent call last):"),
               at(1, "  File \"train.py\", line 3, in <module>"),
               at(1, "    raise TimeoutError(\"timed out\")  # source lines are no evidence"),
               at(1, "ValueError: boom"), at(1.1, exit_line(0, 1))}),
      scan(1, {at(0, start(1, 2)), at(5, exit_line(1, 0))}),
  };
  const auto r = find_first_error(scans, {}, std::nullopt);
  ASSERT_TRUE(r.culprit);
  ASSERT_TRUE(r.culprit->evidence);
  EXPECT_EQ(r.culprit->evidence->text, "ValueError: boom");
  EXPECT_FALSE(r.culprit->peer_loss);
}

// Issue 22, item 21: ranks that each failed on their own with the same error are all culprits.
TEST(FirstError, RanksFailingOnTheirOwnWithTheSameErrorAreAllCulprits) {
  const std::vector<std::string> tb = {"Traceback (most recent call last):", "  File \"t.py\"",
                                       "ValueError: boom"};
  const auto failing = [&](int rank, double t) {
    return scan(rank, {at(0, start(rank, 4)), at(t, tb[0]), at(t, tb[1]), at(t, tb[2]),
                       at(t + 0.1, exit_line(rank, 1))});
  };
  std::vector<RankLogScan> scans = {
      failing(0, 1.0), failing(1, 1.2),
      scan(2, {at(0, start(2, 4)), at(1.5, "connection reset by peer"), at(2, exit_line(2, 1))}),
      failing(3, 1.3)};
  const auto r = find_first_error(scans, {}, std::nullopt);
  ASSERT_TRUE(r.culprit);
  EXPECT_EQ(r.culprit->rank, 0);
  ASSERT_EQ(r.same_error.size(), 2u);
  EXPECT_EQ(r.same_error[0].rank, 1);
  EXPECT_EQ(r.same_error[1].rank, 3);
  ASSERT_EQ(r.victims.size(), 1u);
  EXPECT_EQ(r.victims[0].rank, 2);
  const std::string text = format_first_error(r);
  EXPECT_NE(text.find("first error line (2026-11-22T10:00:01.000000Z): ValueError: boom\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("also culprits (2 ranks failed on their own with the same error line):\n"
                      "  rank 1 on node0 exited with status 1 at 2026-11-22T10:00:01.300000Z "
                      "(0.200 s later)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(first_error_to_json(r)["same_error"].size(), 2u);
}

// Issue 22, item 30: a log written with CRLF line ends still has its exit line recognised.
TEST(FirstError, ExitLinesOfACrlfLogAreRecognised) {
  std::vector<RankLogScan> scans = {
      scan(0, {at(0, start(0, 2)) + "\r", at(1, "boom error\r"), at(2, exit_line(0, 1)) + "\r"}),
      scan(1, {at(0, start(1, 2)) + "\r", at(3, exit_line(1, 0)) + "\r"}),
  };
  const auto r = find_first_error(scans, {}, std::nullopt);
  ASSERT_TRUE(r.culprit);
  EXPECT_EQ(r.culprit->rank, 0);
  EXPECT_EQ(r.culprit->kind, RankEnd::Kind::kFailed);
  EXPECT_EQ(r.culprit->host, "node0");
  EXPECT_EQ(r.finished, std::vector<int>{1});
}

// Issue 22, item 32: `dtrain submit` names the first failing rank in one line.
TEST(FirstError, TheSummaryNamesTheFirstFailingRankInOneLine) {
  std::vector<RankLogScan> scans = {
      scan(0, {at(0, start(0, 2, "n0")), at(2, exit_line(0, 0, 15))}),
      scan(1, {at(0, start(1, 2, "n1")), at(1, "boom error"), at(1.5, exit_line(1, 3))}),
  };
  EXPECT_EQ(summarize_first_error(find_first_error(scans, {}, std::nullopt)),
            "rank 1 on n1 exited with status 3: boom error");
  std::vector<RankLogScan> fine = {scan(0, {at(0, start(0, 1)), at(1, exit_line(0, 0))})};
  EXPECT_EQ(summarize_first_error(find_first_error(fine, {}, std::nullopt)), "");
  std::vector<RankLogScan> stopped = {scan(0, {at(0, start(0, 1)), at(1, exit_line(0, 0, 15))})};
  EXPECT_EQ(summarize_first_error(find_first_error(stopped, {}, std::nullopt)),
            "no rank failed on its own; 1 rank was stopped by the launcher or scheduler "
            "(walltime reached or job cancelled)");
}

// Open MPI's abort had Slurm end the step, every logger with it (issue 33 item 5): no rank has an
// exit line, and rank 3 (the lost one) wrote its last line before rank 0, which was only waiting.
// The lost-peer lines name the culprit, and the ranks did not run on.
TEST(FirstError, WithEveryLoggerEndedTheRankTheOthersNameAsLostIsTheCulprit) {
  const std::string saw =
      "dtrain: allreduce #1 (1048576 bytes, mpi, rank 2 of 4): peer process lost: rank 3 (on "
      "node2) was killed or exited without finalizing; this rank's collectives fail from now on";
  const std::string note = records::format_lost_rank_note({1, 2, 3, "node2", 2, "dtrain submit"});
  for (const bool with_note : {false, true}) {
    std::vector<RankLogScan> scans = {
        scan(0, {at(0, start(0, 4, "node1")), at(0.3, "placement: rank=0")}),
        scan(1, {at(0, start(1, 4, "node1")), at(0.4, "writev failed: Connection reset by peer"),
                 at(0.4, "pml_ob1_sendreq.c:190 FATAL")}),
        scan(2, {at(0, start(2, 4, "node2")), at(0.41, saw)}),
        scan(3, {at(0, start(3, 4, "node2")), at(0.2, "placement: rank=3")}),
    };
    if (with_note) scans[1].add(at(2, note));
    const auto r = find_first_error(scans, {}, std::nullopt);
    ASSERT_TRUE(r.culprit) << with_note;
    EXPECT_EQ(r.culprit->rank, 3);
    EXPECT_EQ(r.culprit_reason, "the other failing ranks' logs name it as the lost peer");
    EXPECT_EQ(r.victims.size(), 3u);
    EXPECT_TRUE(r.running.empty());
  }
}

// 1,024 ranks: rank 3 fails, the launcher then SIGTERMs the other 1,023 over 102 ms. They ended
// alike, so the victims are one line with their ranks collapsed as `dtrain logs --collapse` writes
// them (a line each before), and a victim that ended otherwise keeps its own line.
TEST(FirstError, VictimsThatEndedAlikeAreOneCollapsedLine) {
  std::vector<RankLogScan> scans;
  const auto line = [](std::int64_t micros, const std::string& text) {
    return records::format_log_time(kT0 + micros) + " " + text;
  };
  for (int r = 0; r < 1024; ++r) {
    const std::string host = "node" + std::to_string(r / 4);
    if (r == 3) {
      scans.push_back(scan(r, {line(0, start(r, 1024, host)), line(1'000'000, "CUDA error"),
                               line(1'000'100, exit_line(r, 1))}));
    } else if (r == 9) {
      scans.push_back(scan(r, {line(0, start(r, 1024, host)), line(1'500'000, exit_line(r, 2))}));
    } else {
      scans.push_back(
          scan(r, {line(0, start(r, 1024, host)), line(2'000'000 + r * 100, exit_line(r, 0, 15))}));
    }
  }
  const auto r = find_first_error(scans, {}, std::nullopt);
  ASSERT_TRUE(r.culprit);
  EXPECT_EQ(r.culprit->rank, 3);
  ASSERT_EQ(r.victims.size(), 1023u);
  const std::string text = format_first_error(r);
  EXPECT_NE(text.find("victims (1023 ranks failed after rank 3):\n"
                      "  rank 9 on node2 exited with status 2 at 2026-11-22T10:00:01.500000Z "
                      "(0.500 s later)\n"
                      "  [ranks 0-2,4-8,10-1023 @ 256 hosts] was killed by signal 15 (SIGTERM) at "
                      "2026-11-22T10:00:02.000000Z (1.000 s later; the last at "
                      "2026-11-22T10:00:02.102300Z, 1.102 s later)\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace dtrain::report
