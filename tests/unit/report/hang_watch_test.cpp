// The live hang watch's judgement (report/hang_watch.hpp): /proc parsing, the process described,
// the wait line, and which rank's logger names itself with what text.
#include "report/hang_watch.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using dtrain::records::LiveSnapshot;
using dtrain::report::ProcessSample;
using dtrain::report::RankWait;

constexpr std::int64_t kT0 = 1'700'000'000'000'000;  // microseconds since the epoch
constexpr std::int64_t kSecond = 1'000'000;

TEST(HangWatch, ProcStatGivesStateAndCpuTimeWhateverTheCommandName) {
  // A command name with ") " and spaces in it: the last ')' ends it.
  const std::string stat =
      "4242 (my (odd) prog) T 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 1 2 3";
  const auto s = dtrain::report::parse_proc_stat(stat, 100);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, 'T');
  EXPECT_DOUBLE_EQ(s->cpu_seconds, 3.0);  // (250 + 50) ticks at 100 per second
  EXPECT_FALSE(dtrain::report::parse_proc_stat("", 100));
  EXPECT_FALSE(dtrain::report::parse_proc_stat("12 (x) R 1 2", 100));  // cut short
  EXPECT_FALSE(dtrain::report::parse_proc_stat("12 (x) R 1 2 3 4 5 6 7 8 9 10 u v", 100));
}

TEST(HangWatch, TheProcessIsDescribedAsAUserWouldSayIt) {
  using dtrain::report::describe_process;
  const ProcessSample idle{'S', 10.0, "0"};
  EXPECT_EQ(describe_process(idle, {'T', 10.0, "do_signal_stop"}, 2.0), "stopped (SIGSTOP)");
  EXPECT_EQ(describe_process(idle, {'R', 11.96, "0"}, 2.0), "running, 98 % CPU");
  // Between two samples a busy process may be caught asleep: its CPU time says it ran.
  EXPECT_EQ(describe_process(idle, {'S', 11.8, "0"}, 2.0), "running, 90 % CPU");
  EXPECT_EQ(describe_process(idle, {'S', 10.0, "futex_wait_queue"}, 2.0),
            "sleeping in futex_wait_queue, 0 % CPU");
  EXPECT_EQ(describe_process(idle, {'D', 10.0, "nfs_wait_bit_killable"}, 2.0),
            "blocked in the kernel (D state) in nfs_wait_bit_killable");
  EXPECT_EQ(describe_process(idle, {'Z', 10.0, ""}, 2.0), "exited (not yet reaped)");
}

TEST(HangWatch, AWaitLineReadsBackAndAHalfLineDoesNot) {
  const RankWait w{12, "node7", 812, "allreduce", 4194304, kT0, 1};
  const auto back = dtrain::report::parse_wait(dtrain::report::format_wait(w));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->rank, 12);
  EXPECT_EQ(back->host, "node7");
  EXPECT_EQ(back->seq, 812u);
  EXPECT_EQ(back->op, "allreduce");
  EXPECT_EQ(back->bytes, 4194304u);
  EXPECT_EQ(back->since_us, kT0);
  EXPECT_EQ(back->slot, 1);
  const std::string line = dtrain::report::format_wait(w);
  EXPECT_FALSE(dtrain::report::parse_wait(line.substr(0, line.size() / 2)));
  EXPECT_FALSE(dtrain::report::parse_wait("wait rank=x seq=1 bytes=1 since_us=1 host=a op=b"));
  EXPECT_FALSE(dtrain::report::parse_wait("garbage"));
}

TEST(HangWatch, ARankPublishesItsWaitOnlyAfterHangAfterInsideOneCollective) {
  LiveSnapshot inside;
  inside.entered = 42;  // inside #41
  inside.left = 41;
  inside.entered_at_us = kT0;
  inside.op = "allreduce";
  inside.bytes = 4096;
  const auto after = std::chrono::seconds(30);
  EXPECT_FALSE(dtrain::report::wait_to_publish(0, "a", inside, kT0 + 29 * kSecond, after));
  const auto w = dtrain::report::wait_to_publish(0, "a", inside, kT0 + 30 * kSecond, after);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->seq, 41u);
  LiveSnapshot outside = inside;
  outside.left = 42;
  EXPECT_FALSE(dtrain::report::wait_to_publish(0, "a", outside, kT0 + 60 * kSecond, after));
}

TEST(HangWatch, TheRankThatNeverEnteredTheCollectiveNamesItselfAndTheWaiters) {
  std::vector<RankWait> waits;
  for (int r : {0, 2, 3}) waits.push_back({r, "node1", 41, "allreduce", 4096, kT0 + r * kSecond});
  LiveSnapshot stopped;  // left #40 five seconds before the others entered #41
  stopped.entered = 41;
  stopped.left = 41;
  stopped.left_at_us = kT0 - 5 * kSecond;
  stopped.op = "allreduce";
  const auto v = dtrain::report::hang_verdict(1, "node2", stopped, "stopped (SIGSTOP)", waits,
                                              kT0 + 31 * kSecond, std::chrono::seconds(30));
  ASSERT_TRUE(v);
  EXPECT_EQ(*v,
            "dtrain: hang: rank 1 (on node2) is stopped (SIGSTOP), outside any collective (it left "
            "allreduce #40 36 s ago); ranks 0,2-3 wait in allreduce #41 of 4096 bytes for 31 s");
  // A rank inside #41 itself, or past it, holds nobody up.
  LiveSnapshot in41 = stopped;
  in41.entered = 42;
  EXPECT_FALSE(dtrain::report::hang_verdict(1, "node2", in41, "running", waits, kT0,
                                            std::chrono::seconds(30)));
  // A rank inside an earlier collective for hang_after itself waits too (a node's non-leader ranks
  // wait for the last allreduce's result while their leaders already entered the next): not it.
  LiveSnapshot in39;
  in39.entered = 40;
  in39.left = 39;
  in39.entered_at_us = kT0 - 10 * kSecond;
  in39.op = "broadcast";
  EXPECT_FALSE(dtrain::report::hang_verdict(1, "node2", in39, "sleeping", waits, kT0 + 30 * kSecond,
                                            std::chrono::seconds(30)));
  // Stopped inside it (SIGSTOP caught it in the middle of #39): not a waiter, named.
  const auto s39 = dtrain::report::hang_verdict(1, "node2", in39, "stopped (SIGSTOP)", waits,
                                                kT0 + 30 * kSecond, std::nullopt);
  ASSERT_TRUE(s39);
  EXPECT_NE(s39->find("rank 1 (on node2) is stopped (SIGSTOP), inside broadcast #39 for 40 s; "
                      "ranks 0,2-3 wait in allreduce #41"),
            std::string::npos)
      << *s39;
  // Stopped inside the very collective the others wait in (their #41): named, not a waiter.
  LiveSnapshot in41_stopped;
  in41_stopped.entered = 42;
  in41_stopped.left = 41;
  in41_stopped.entered_at_us = kT0;
  in41_stopped.op = "allreduce";
  const auto s41 = dtrain::report::hang_verdict(1, "node2", in41_stopped, "stopped (SIGSTOP)",
                                                waits, kT0 + 35 * kSecond, std::nullopt);
  ASSERT_TRUE(s41);
  EXPECT_NE(s41->find("is stopped (SIGSTOP), inside allreduce #41 for 35 s; ranks 0,2-3 wait in "
                      "allreduce #41"),
            std::string::npos)
      << *s41;
  // The same rank alive and waiting there is a waiter.
  EXPECT_FALSE(dtrain::report::hang_verdict(1, "node2", in41_stopped, "sleeping", waits,
                                            kT0 + 35 * kSecond, std::chrono::seconds(30)));
  EXPECT_FALSE(dtrain::report::can_wait({'T', 0, ""}));
  EXPECT_FALSE(dtrain::report::can_wait({'D', 0, ""}));
  EXPECT_TRUE(dtrain::report::can_wait({'S', 0, ""}));
  EXPECT_TRUE(dtrain::report::can_wait({'R', 0, ""}));
  // Inside it for less (it keeps calling, just not what the others call): named with where.
  in39.entered_at_us = kT0 + 25 * kSecond;
  const auto d =
      dtrain::report::hang_verdict(1, "node2", in39, "sleeping in futex_wait_queue, 0 % CPU", waits,
                                   kT0 + 30 * kSecond, std::chrono::seconds(30));
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("rank 1 (on node2) is sleeping in futex_wait_queue, 0 % CPU, inside "
                    "broadcast #39 for 5 s; ranks 0,2-3 wait in allreduce #41"),
            std::string::npos)
      << *d;
}

TEST(HangWatch, ThousandsOfWaitersAreNamedAsRanges) {
  std::vector<RankWait> waits;
  for (int r = 0; r < 1024; ++r) {
    if (r != 517) waits.push_back({r, "n", 7, "allreduce", 8, kT0});
  }
  LiveSnapshot fresh;  // entered nothing yet
  const auto v = dtrain::report::hang_verdict(517, "n", fresh, "running, 100 % CPU", waits,
                                              kT0 + 30 * kSecond, std::chrono::seconds(30));
  ASSERT_TRUE(v);
  EXPECT_NE(v->find("outside any collective (it has entered none yet); ranks 0-516,518-1023 wait "
                    "in allreduce #7 of 8 bytes for 30 s"),
            std::string::npos)
      << *v;
  EXPECT_LT(v->size(), 300u);
}

TEST(HangWatch, EveryRankInTheSameCollectiveMeansItsBytesDoNotMove) {
  std::vector<RankWait> waits;
  for (int r = 0; r < 4; ++r) {
    waits.push_back({r, r < 2 ? "node1" : "node2", 12, "allreduce", 1024, kT0 + r * kSecond});
  }
  EXPECT_EQ(dtrain::report::all_waiting_verdict(4, waits, kT0 + 40 * kSecond),
            "dtrain: hang: all 4 ranks wait in allreduce #12 of 1024 bytes for 40 s: none is "
            "missing, so bytes are not moving (between 2 hosts: a cut or failing link, or a stuck "
            "transport)");
  // One rank not waiting: not this verdict.
  EXPECT_FALSE(dtrain::report::all_waiting_verdict(5, waits, kT0));
  // The hierarchy's leaders already in the next collective (a link cut between 2 nodes, measured).
  waits[0].seq = 13;
  waits[2].seq = 13;
  EXPECT_EQ(dtrain::report::all_waiting_verdict(4, waits, kT0 + 40 * kSecond),
            "dtrain: hang: all 4 ranks wait in allreduce #12 (some already in #13) for 39 s: none "
            "is missing, so bytes are not moving (between 2 hosts: a cut or failing link, or a "
            "stuck transport)");
}

TEST(HangWatch, RanksThatPublishedNothingAreNamedWhenNobodySpoke) {
  const std::vector<RankWait> waits = {{0, "node1", 9, "barrier", 0, kT0},
                                       {1, "node1", 9, "barrier", 0, kT0}};
  EXPECT_EQ(dtrain::report::silent_ranks_verdict({2, 3}, waits, kT0 + 50 * kSecond,
                                                 std::chrono::seconds(50)),
            "dtrain: hang: ranks 2-3 published no wait and their loggers named no cause within "
            "50 s (their node stopped answering, or their loggers died); ranks 0-1 wait in "
            "barrier #9 for 50 s");
}

}  // namespace
