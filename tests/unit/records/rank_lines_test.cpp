// run-rank's start and exit lines: what the writers format, the readers parse back.
#include "records/rank_lines.hpp"

#include <gtest/gtest.h>

#include <string>

namespace dtrain::records {
namespace {

TEST(RankLines, FormatAndParseRoundTrip) {
  const std::string s = format_rank_start({3, 8, "nid001", 3, 8, 103, "python train.py", 0});
  EXPECT_EQ(s,
            "dtrain: rank 3 of 8 started on nid001 (local rank 3 of 8, pid 103): python train.py");
  const auto parsed = parse_rank_start(s);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->host, "nid001");
  EXPECT_EQ(parsed->world_size, 8);
  EXPECT_EQ(parsed->command, "python train.py");
  EXPECT_EQ(format_rank_exit({2, 0, 9}), "dtrain: rank 2 was killed by signal 9 (SIGKILL)");
  EXPECT_EQ(parse_rank_exit("dtrain: rank 2 was killed by signal 9 (SIGKILL)")->signal, 9);
  EXPECT_EQ(parse_rank_exit("dtrain: rank 2 exited with status 3")->status, 3);
  EXPECT_FALSE(parse_rank_exit("dtrain: rank 2 exited with status 3 maybe"));
  EXPECT_EQ(attempt_from_text("3"), 3);
  for (const char* bad : {"", "-1", "x", "1 ", " 1", "+1", "-0", "1234567"})
    EXPECT_EQ(attempt_from_text(bad), 0) << bad;
  EXPECT_FALSE(parse_rank_start("dtrain: rank x of 8 started on h"));
}

// A restarted job's ranks say which attempt they belong to; the first attempt's lines stay as
// they were.
TEST(RankLines, StartLinesOfLaterAttemptsCarryTheAttempt) {
  RankStart start{1, 2, "node0", 1, 2, 4300, "./train", 2};
  const std::string s = format_rank_start(start);
  EXPECT_EQ(
      s, "dtrain: rank 1 of 2 started on node0 (local rank 1 of 2, pid 4300, attempt 2): ./train");
  const auto parsed = parse_rank_start(s);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->attempt, 2);
  EXPECT_EQ(parsed->pid, 4300);
  EXPECT_EQ(parsed->command, "./train");
  EXPECT_EQ(parse_rank_start(format_rank_start({1, 2, "node0", 1, 2, 4300, "./train", 0}))->attempt,
            0);
  EXPECT_FALSE(parse_rank_start(
      "dtrain: rank 1 of 2 started on n (local rank 1 of 2, pid 4, attempt x): a"));
}

// Issue 22, item 30: a log that went through a Windows tool has CRLF line ends.
TEST(RankLines, ACarriageReturnBeforeTheLineEndIsNotPartOfTheLine) {
  ASSERT_TRUE(parse_rank_exit("dtrain: rank 2 exited with status 3\r"));
  EXPECT_EQ(parse_rank_exit("dtrain: rank 2 exited with status 3\r")->status, 3);
  EXPECT_EQ(parse_rank_exit("dtrain: rank 2 was killed by signal 9 (SIGKILL)\r")->signal, 9);
  const auto start =
      parse_rank_start("dtrain: rank 1 of 2 started on n1 (local rank 1 of 2, pid 7): a b\r");
  ASSERT_TRUE(start);
  EXPECT_EQ(start->command, "a b");
}

TEST(RankLines, ExitsAreDescribedWithTheSignalName) {
  EXPECT_EQ(describe_exit({1, 3, 0}), "exited with status 3");
  EXPECT_EQ(describe_exit({1, 0, 15}), "was killed by signal 15 (SIGTERM)");
  EXPECT_EQ(signal_name(77), "signal 77");
  EXPECT_EQ(join_command({"python", "train.py", "--lr", "0.1"}), "python train.py --lr 0.1");
  EXPECT_FALSE((RankExit{0, 0, 0}.failed()));
  EXPECT_TRUE((RankExit{0, 0, 9}.failed()));
}

TEST(RankLines, ANoteOfALostRankIsToldFromTheRanksOwnLines) {
  const std::string note = format_lost_rank_note({1, 2, 3, "node2", 2, "dtrain submit"});
  EXPECT_EQ(note,
            "dtrain: rank 1 ended before it heard what rank 2 reported: peer process lost: rank 3 "
            "(on node2) was killed or exited without finalizing (seen by rank 2 on that node); "
            "written after the launch ended, by dtrain submit");
  EXPECT_TRUE(is_lost_rank_note(note));
  EXPECT_TRUE(is_lost_rank_note(note + "\r"));
  EXPECT_FALSE(is_lost_rank_note("dtrain: rank 1 exited with status 1"));
  // A rank's own output quoting the words is no note: it does not start like one.
  EXPECT_FALSE(is_lost_rank_note("echo " + note));
  EXPECT_FALSE(is_lost_rank_note("dtrain: rank 1 ended before it heard what rank 2 reported: ok"));
}

}  // namespace
}  // namespace dtrain::records
