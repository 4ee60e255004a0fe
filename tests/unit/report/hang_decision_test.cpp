// What one rank's hang watch decides at one tick (report/hang_decision.hpp): a node cut off named
// as soon as the nodes' probes agree, long before hang_after, by its own ranks' loggers and then
// by the other side's lowest rank; every other verdict only after hang_after.
#include "report/hang_decision.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "watch_waits.hpp"

namespace {

using dtrain::report::Decision;
using dtrain::report::NodeReach;
using dtrain::report::RankWait;
using dtrain::report::WatchMemory;
using dtrain::report::WatchView;

using dtrain::report::testing::kSecond;
using dtrain::report::testing::kT0;
using dtrain::report::testing::node2_cut;
using dtrain::report::testing::six_waiting;

std::vector<NodeReach> all_answer() {
  return {{"node1", {"node2", "node3"}, {}},
          {"node2", {"node1", "node3"}, {}},
          {"node3", {"node1", "node2"}, {}}};
}

// The view of rank `rank` of six_waiting(), itself inside #12 since kT0, `seconds` later.
WatchView view_of(int rank, double seconds, std::vector<NodeReach> reach) {
  WatchView v;
  v.rank = rank;
  v.host = "node" + std::to_string(rank / 2 + 1);
  v.size = 6;
  v.hang_after = std::chrono::seconds(30);
  dtrain::records::LiveSnapshot in;
  in.entered = 13;
  in.left = 12;
  in.entered_at_us = kT0 + rank;
  in.bytes = 4096;
  in.op = "allreduce";
  v.slots = {in};
  v.doing = "sleeping in futex_wait_queue, 0 % CPU";
  v.waits = six_waiting();
  v.own_wait = v.waits[static_cast<std::size_t>(rank)];
  v.reach = std::move(reach);
  v.now_us = kT0 + static_cast<std::int64_t>(seconds * kSecond);
  return v;
}

const auto kNoneNamed = [] { return false; };

const std::string kNode2 =
    "dtrain: hang: node node2 (ranks 2-3) stopped answering: nodes node1, node3 cannot reach it "
    "and reach each other (it reaches none of them: its link is cut); ranks 0-5 wait in allreduce "
    "#12 of 4096 bytes for ";

TEST(HangDecision, WaitsArePublishedAfterTheLinkCheckOrHangAfterIfShorter) {
  using dtrain::report::publish_after;
  EXPECT_EQ(publish_after(std::chrono::seconds(30)), std::chrono::seconds(5));
  EXPECT_EQ(publish_after(std::chrono::seconds(3)), std::chrono::seconds(3));
  EXPECT_EQ(dtrain::report::kLinkCheckAfter, std::chrono::seconds(5));
}

TEST(HangDecision, WaitFilesAreReadWhenEveryRankWaitsOrOnceHangAfterCanHavePassed) {
  using dtrain::report::read_waits_now;
  const auto s30 = std::chrono::seconds(30);
  // 5 of 6 published (rank 0 saves a checkpoint): listed, not read, until 25 s after the first.
  EXPECT_FALSE(read_waits_now(5, 6, kT0, kT0 + 24 * kSecond, s30, false));
  EXPECT_TRUE(read_waits_now(5, 6, kT0, kT0 + 25 * kSecond, s30, false));
  // Every rank waits: read at once (the cut-node check).
  EXPECT_TRUE(read_waits_now(6, 6, kT0, kT0, s30, false));
  // Every rank was seen waiting, and a rank of the cut node left its wait since: read on.
  EXPECT_TRUE(read_waits_now(5, 6, kT0, kT0 + 9 * kSecond, s30, true));
  // hang_after below the link check: published at hang_after, read at once, as before.
  EXPECT_TRUE(read_waits_now(1, 6, kT0, kT0, std::chrono::seconds(3), false));
}

TEST(HangDecision, ACutNodeIsNamedByItsOwnRanksAsSoonAsTheProbesAgree) {
  // 8 s into the wait (5 s to publish, a probe of at most 3 s), far before hang_after's 30 s.
  for (int rank : {2, 3}) {
    WatchMemory memory;
    const Decision d = decide(view_of(rank, 8, node2_cut()), memory, kNoneNamed);
    ASSERT_TRUE(d.verdict) << rank;
    EXPECT_EQ(*d.verdict, kNode2 + "8 s");
    EXPECT_EQ(d.action, "ending ranks 2-3 on node2, the node cut off");
    EXPECT_EQ(d.say, rank == 2);  // each ends its own rank, the lowest says so
    EXPECT_TRUE(d.keep_wait);
  }
}

TEST(HangDecision, TheOtherSidesLowestNamesTheCutNodeFourSecondsLaterNotAtFault) {
  WatchMemory memory;
  Decision d = decide(view_of(0, 8, node2_cut()), memory, kNoneNamed);
  EXPECT_FALSE(d.verdict);  // held back for node2's loggers
  ASSERT_TRUE(memory.held);
  EXPECT_FALSE(decide(view_of(0, 11, node2_cut()), memory, kNoneNamed).verdict);
  d = decide(view_of(0, 12, node2_cut()), memory, kNoneNamed);
  ASSERT_TRUE(d.verdict);
  EXPECT_EQ(*d.verdict, kNode2 + "8 s");
  EXPECT_EQ(d.action,
            "ending ranks 2-3 on node2 (their loggers there) and rank 0 on node1, not at fault: "
            "the ranks on this side of the cut would not learn of node2's end");
  EXPECT_EQ(d.cut_host, "node2");
  EXPECT_FALSE(d.keep_wait);
  // The other ranks of node1 and node3 never speak, and no one names node1 or node3.
  for (int rank : {1, 4, 5}) {
    WatchMemory theirs;
    for (double t : {8.0, 12.0, 40.0, 60.0}) {
      EXPECT_FALSE(decide(view_of(rank, t, node2_cut()), theirs, kNoneNamed).verdict)
          << rank << " at " << t;
    }
  }
}

TEST(HangDecision, TheCutNodesRanksMayLeaveTheirWaitsBeforeTheOtherSideDecides) {
  // Every rank seen waiting, the probes not yet in; then a logger on node2 ends rank 3 and rank 2
  // fails on its local connection to it, so rank 2's wait goes (rank 3's stays: keep_wait).
  WatchMemory memory;
  EXPECT_FALSE(decide(view_of(0, 6, {}), memory, kNoneNamed).verdict);
  WatchView v = view_of(0, 9, node2_cut());
  v.waits.erase(v.waits.begin() + 2);
  EXPECT_TRUE(link_check_due(v, memory));
  EXPECT_FALSE(decide(v, memory, kNoneNamed).verdict);
  ASSERT_TRUE(memory.held);
  v.now_us += 4 * kSecond;
  const Decision d = decide(v, memory, kNoneNamed);
  ASSERT_TRUE(d.verdict);
  EXPECT_EQ(*d.verdict, kNode2 + "9 s");
  EXPECT_EQ(d.cut_host, "node2");
  // A rank of another node gone instead: no node named on those records.
  WatchMemory other;
  EXPECT_FALSE(decide(view_of(0, 6, {}), other, kNoneNamed).verdict);
  WatchView w = view_of(0, 9, node2_cut());
  w.waits.erase(w.waits.begin() + 4);
  EXPECT_FALSE(decide(w, other, kNoneNamed).verdict);
  EXPECT_FALSE(other.held);
  // Never seen all waiting: nothing to go on.
  WatchMemory none;
  EXPECT_FALSE(link_check_due(v, none));
  EXPECT_FALSE(decide(v, none, kNoneNamed).verdict);
  EXPECT_FALSE(none.held);
}

TEST(HangDecision, WithDtrainOnHangWaitTheOtherSideNamesTheCutNodeAtOnce) {
  WatchMemory memory;
  WatchView v = view_of(0, 8, node2_cut());
  v.abort = false;
  const Decision d = decide(v, memory, kNoneNamed);
  ASSERT_TRUE(d.verdict);
  EXPECT_EQ(*d.verdict, kNode2 + "8 s");
  // node2's own loggers end nothing under wait, and leave the words to the other side.
  WatchMemory theirs;
  v = view_of(2, 8, node2_cut());
  v.abort = false;
  EXPECT_FALSE(decide(v, theirs, kNoneNamed).verdict);
}

TEST(HangDecision, ProbesThatPointAtNoSingleNodeWaitForHangAfter) {
  // Every node answers (a stuck transport, or one collective of many gigabytes): nothing is said
  // before hang_after (30 s + 2 s to collect the waits), then the lowest says every rank waits.
  // node2 silent to node1 only (node3 reaches it): no node named either.
  std::vector<NodeReach> one_sided = {{"node1", {"node3"}, {"node2"}},
                                      {"node2", {"node1", "node3"}, {}},
                                      {"node3", {"node1", "node2"}, {}}};
  for (const auto& reach : {all_answer(), one_sided}) {
    WatchMemory memory;
    for (double t : {6.0, 10.0, 20.0, 31.9}) {
      EXPECT_FALSE(decide(view_of(0, t, reach), memory, kNoneNamed).verdict) << t;
    }
    const Decision d = decide(view_of(0, 32, reach), memory, kNoneNamed);
    ASSERT_TRUE(d.verdict);
    EXPECT_EQ(*d.verdict,
              "dtrain: hang: all 6 ranks wait in allreduce #12 of 4096 bytes for 32 s: none is "
              "missing, so bytes are not moving (between 3 hosts: a cut or failing link, or a "
              "stuck transport)");
    EXPECT_EQ(d.action, "ending rank 0");
    WatchMemory node2s;
    EXPECT_FALSE(decide(view_of(2, 32, reach), node2s, kNoneNamed).verdict);
  }
}

TEST(HangDecision, TwoNodesAreNeverToldApartAndWaitForHangAfter) {
  WatchView v = view_of(0, 10, {{"node1", {}, {"node2"}}, {"node2", {}, {"node1"}}});
  v.waits.resize(4);
  v.size = 4;
  WatchMemory memory;
  EXPECT_FALSE(decide(v, memory, kNoneNamed).verdict);
  v.now_us = kT0 + 32 * kSecond;
  const Decision d = decide(v, memory, kNoneNamed);
  ASSERT_TRUE(d.verdict);
  EXPECT_NE(d.verdict->find("all 4 ranks wait"), std::string::npos) << *d.verdict;
}

TEST(HangDecision, ARankTheOthersWaitForIsNamedOnlyAfterHangAfter) {
  // Rank 3 stopped outside any collective (it left #11); ranks 0-2 wait in #12.
  WatchView v = view_of(3, 10, {});
  v.waits.resize(3);
  v.own_wait.reset();
  v.slots[0].entered = 12;
  v.slots[0].left = 12;
  v.slots[0].left_at_us = kT0 - kSecond;
  v.doing = "stopped (SIGSTOP)";
  v.able = false;
  WatchMemory memory;
  EXPECT_FALSE(decide(v, memory, kNoneNamed).verdict);  // 10 s: rank 0 may be saving
  v.now_us = kT0 + 31 * kSecond;
  EXPECT_FALSE(decide(v, memory, kNoneNamed).verdict);  // the waits still being collected
  v.now_us = kT0 + 32 * kSecond;
  const Decision d = decide(v, memory, kNoneNamed);
  ASSERT_TRUE(d.verdict);
  EXPECT_EQ(*d.verdict,
            "dtrain: hang: rank 3 (on node2) is stopped (SIGSTOP), outside any collective (it "
            "left allreduce #11 33 s ago); ranks 0-2 wait in allreduce #12 of 4096 bytes for 32 s");
  EXPECT_EQ(d.action, "ending rank 3");
  EXPECT_TRUE(d.say);
  // A waiter published at 5 s is no culprit, before hang_after or after it.
  for (double t : {10.0, 32.0}) {
    WatchMemory waiter;
    WatchView w = view_of(0, t, {});
    w.waits.resize(3);
    EXPECT_FALSE(decide(w, waiter, kNoneNamed).verdict) << t;
  }
}

TEST(HangDecision, RanksThatPublishedNothingAreNamedByTheLowestTwentySecondsAfterHangAfter) {
  WatchView v = view_of(0, 49, {});
  v.waits.resize(4);  // ranks 4-5's node stopped answering, their loggers with it
  WatchMemory memory;
  EXPECT_FALSE(decide(v, memory, kNoneNamed).verdict);
  v.now_us = kT0 + 50 * kSecond;
  const Decision d = decide(v, memory, kNoneNamed);
  ASSERT_TRUE(d.verdict);
  EXPECT_EQ(d.verdict->rfind("dtrain: hang: ranks 4-5 published no wait and their loggers named "
                             "no cause within 50 s",
                             0),
            0u)
      << *d.verdict;
  // Not when a logger already named a cause, nor from a rank that is not the lowest.
  WatchMemory again;
  EXPECT_FALSE(decide(v, again, [] { return true; }).verdict);
  WatchView r1 = view_of(1, 50, {});
  r1.waits.resize(4);
  EXPECT_FALSE(decide(r1, again, kNoneNamed).verdict);
}

TEST(HangDecision, ProbingStartsWhenEveryRankWaitsWithThisOne) {
  EXPECT_TRUE(every_rank_waits(view_of(0, 5, {})));
  WatchView v = view_of(0, 5, {});
  v.waits.resize(5);
  EXPECT_FALSE(every_rank_waits(v));
  v = view_of(0, 5, {});
  v.own_wait.reset();
  EXPECT_FALSE(every_rank_waits(v));
}

}  // namespace
