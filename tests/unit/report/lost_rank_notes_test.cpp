// The ranks whose logs do not name the lost rank another rank's log names, and the line each gets
// after the launch ended (issue 33 item 5): a 2 x 2 job, rank 3 on node2 killed, rank 2 saw it,
// rank 0 heard the alarm, rank 1 was ended by the launcher first.
#include "report/lost_rank_notes.hpp"

#include <gtest/gtest.h>

#include "rank_logs.hpp"

namespace dtrain::report {
namespace {

using testing::at;
using testing::exit_line;
using testing::scan;
using testing::start;

const std::string kSaw =
    "dtrain: allreduce #9 (1048576 bytes, mpi, rank 2 of 4): peer process lost: rank 3 (on node2) "
    "was killed or exited without finalizing; this rank's collectives fail from now on";
const std::string kHeard =
    "dtrain: allreduce #9 (1048576 bytes, mpi, rank 0 of 4): peer process lost: rank 3 (on node2) "
    "was killed or exited without finalizing (seen by rank 2 on that node); this rank's "
    "collectives fail from now on";

std::vector<RankLogScan> job(const std::string& rank0_line) {
  return {scan(0, {at(0, start(0, 4, "node1")), at(2.1, rank0_line), at(2.2, exit_line(0, 1))}),
          scan(1, {at(0, start(1, 4, "node1")), at(1, "step 9")}),  // ended with its logger
          scan(2, {at(0, start(2, 4, "node2")), at(2, kSaw), at(2.3, exit_line(2, 1))}),
          scan(3, {at(0, start(3, 4, "node2")), at(1.9, exit_line(3, 0, 9))})};
}

TEST(LostRankNotes, TheRankThatDidNotHearGetsTheEarliestReportWithItsWitnessAndTheWriter) {
  const auto notes = lost_rank_notes(job(kHeard), "dtrain supervise");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rank, 1);
  EXPECT_EQ(records::format_lost_rank_note(notes[0]),
            "dtrain: rank 1 ended before it heard what rank 2 reported: peer process lost: rank 3 "
            "(on node2) was killed or exited without finalizing (seen by rank 2 on that node); "
            "written after the launch ended, by dtrain supervise");
}

TEST(LostRankNotes, EveryRankThatSaidItLeavesNothingToAdd) {
  auto scans = job(kHeard);
  scans[1] = scan(1, {at(0, start(1, 4, "node1")), at(2.1, kHeard)});
  EXPECT_TRUE(lost_rank_notes(scans, "dtrain supervise").empty());
}

TEST(LostRankNotes, NoRankNamedALostPeerSoNothingIsGuessed) {
  auto scans = job("RuntimeError: something else");
  scans[2] = scan(2, {at(0, start(2, 4, "node2")), at(2.3, exit_line(2, 1))});
  EXPECT_TRUE(lost_rank_notes(scans, "dtrain supervise").empty());
}

TEST(LostRankNotes, RanksThatFinishedOrNeverStartedAndTheLostRankGetNone) {
  auto scans = job(kHeard);
  scans[0] = scan(0, {at(0, start(0, 4, "node1")), at(1, exit_line(0, 0))});  // finished
  scans.push_back(scan(4, {"no start line here"}));
  const auto notes = lost_rank_notes(scans, "dtrain submit");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rank, 1);
  EXPECT_EQ(notes[0].writer, "dtrain submit");
}

TEST(LostRankNotes, ThisNodeBecomesTheReportersHostAndTheReporterTheWitness) {
  auto scans = job("RuntimeError: other");
  scans[2] = scan(2, {at(0, start(2, 4, "node2")),
                      at(2,
                         "dtrain: allreduce #9 (1048576 bytes, mpi, rank 2 of 4): peer process "
                         "lost: rank 3 (on this node) was killed or exited without finalizing")});
  const auto notes = lost_rank_notes(scans, "dtrain supervise");
  ASSERT_EQ(notes.size(), 2u);  // ranks 0 and 1
  EXPECT_EQ(notes[0].rank, 0);
  EXPECT_EQ(notes[0].lost_host, "node2");
  EXPECT_EQ(notes[0].told_by, 2);
  EXPECT_EQ(notes[1].rank, 1);
}

TEST(LostRankNotes, ARankThatLeftAfterAnErrorIsQuotedAsLeaving) {
  auto scans = job("RuntimeError: other");
  scans[2] = scan(2, {at(0, start(2, 4, "node2")),
                      at(2,
                         "dtrain: allreduce #9 (4096 bytes, mpi, rank 2 of 4): peer process "
                         "lost: rank 3 (on node2) left the job after an error, without "
                         "finalizing (its own output says which); this rank's collectives fail "
                         "from now on")});
  const auto notes = lost_rank_notes(scans, "dtrain supervise");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(records::format_lost_rank_note(notes[1]),
            "dtrain: rank 1 ended before it heard what rank 2 reported: peer process lost: rank 3 "
            "(on node2) left the job after an error, without finalizing (its own output says "
            "which); written after the launch ended, by dtrain supervise");
}

TEST(LostRankNotes, ANoteAlreadyWrittenCountsSoASecondWriterAddsNothing) {
  auto scans = job(kHeard);
  const auto notes = lost_rank_notes(scans, "dtrain supervise");
  ASSERT_EQ(notes.size(), 1u);
  scans[1] = scan(1, {at(0, start(1, 4, "node1")), at(1, "step 9"),
                      at(5, records::format_lost_rank_note(notes[0]))});
  EXPECT_TRUE(lost_rank_notes(scans, "dtrain submit").empty());
}

}  // namespace
}  // namespace dtrain::report
