#include "report/log_collapse.hpp"

#include <gtest/gtest.h>

#include "records/log_line.hpp"
#include "report/rank_ranges.hpp"

namespace dtrain::report {
namespace {

constexpr std::int64_t kT0 = 1795341600'000000;  // 2026-11-22T10:00:00Z

struct Collapsed {
  std::string out;
  LogCollapser collapser;
  explicit Collapsed(std::int64_t window = kCollapseWindowMicros, std::size_t max_open = 1024)
      : collapser([this](std::string_view line) { out.append(line); }, window, max_open) {}
  void add(int rank, const std::string& host, std::int64_t t, const std::string& text) {
    collapser.add(rank, host, kT0 + t, records::format_log_time(kT0 + t) + " " + text);
  }
};

// 1,024 ranks on 256 hosts print the same warning within half a second: one line, at the first
// one's time.
TEST(LogCollapse, OneThousandTwentyFourRanksPrintingTheSameWarningAreOneLine) {
  Collapsed c;
  for (int r = 0; r < 1024; ++r) {
    c.add(r, "node" + std::to_string(r / 4), r * 500, "UserWarning: TypedStorage is deprecated");
  }
  c.collapser.emit_all();
  EXPECT_EQ(c.out,
            "2026-11-22T10:00:00.000000Z [ranks 0-1023 @ 256 hosts] UserWarning: TypedStorage is "
            "deprecated\n");
}

// A line one rank alone printed reads as without --collapse; groups keep the order of their first
// lines, each written once its window has passed.
TEST(LogCollapse, LinesOfOneRankReadAsWithoutCollapseAndOrderIsKept) {
  Collapsed c;
  c.add(0, "n0", 0, "loading data");
  c.add(2, "n1", 100, "step 0 loss 2.31");
  c.add(1, "n0", 200, "loading data");
  c.add(3, "n1", 300, "loading data");
  c.add(0, "n0", 400, "loading data");        // again: 4 lines of 3 ranks
  c.add(1, "n0", 2'000'000, "loading data");  // the window (2 s) after the first: joins it
  EXPECT_EQ(c.out, "");
  c.add(1, "n0", 2'000'001, "loading data");  // past it: a new group, and the first is written
  EXPECT_EQ(c.out, "2026-11-22T10:00:00.000000Z [ranks 0-1,3 @ 2 hosts, 5 lines] loading data\n");
  c.collapser.emit_all();
  EXPECT_EQ(c.out,
            "2026-11-22T10:00:00.000000Z [ranks 0-1,3 @ 2 hosts, 5 lines] loading data\n"
            "2026-11-22T10:00:00.000100Z [2@n1] step 0 loss 2.31\n"
            "2026-11-22T10:00:02.000001Z [1@n0] loading data\n");
}

TEST(LogCollapse, RanksOfOneHostNameTheHostAndOneRankRepeatingCountsItsLines) {
  Collapsed c;
  c.add(0, "n0", 0, "retrying");
  c.add(1, "n0", 1, "retrying");
  c.add(5, "n1", 2, "slow");
  c.add(5, "n1", 3, "slow");
  c.collapser.emit_all();
  EXPECT_EQ(c.out,
            "2026-11-22T10:00:00.000000Z [ranks 0-1 @ n0] retrying\n"
            "2026-11-22T10:00:00.000002Z [rank 5 @ n1, 2 lines] slow\n");
}

// While following, the clock ends a window even when no later line comes.
TEST(LogCollapse, TheClockEndsAWindowWhileFollowing) {
  Collapsed c;
  c.add(0, "n0", 0, "warning");
  c.add(1, "n0", 10, "warning");
  c.collapser.emit_before(kT0 - 1);
  EXPECT_EQ(c.out, "");
  c.collapser.emit_before(kT0 + 1);
  EXPECT_EQ(c.out, "2026-11-22T10:00:00.000000Z [ranks 0-1 @ n0] warning\n");
}

// Memory is bounded: with room for 2 open groups, a third writes the oldest at once.
TEST(LogCollapse, OpenGroupsAreBounded) {
  Collapsed c(kCollapseWindowMicros, 2);
  c.add(0, "n0", 0, "a");
  c.add(0, "n0", 1, "b");
  EXPECT_EQ(c.out, "");
  c.add(0, "n0", 2, "c");
  EXPECT_EQ(c.out, "2026-11-22T10:00:00.000000Z [0@n0] a\n");
}

// A line without a timestamp (a traceback a crash cut) groups by its whole text.
TEST(LogCollapse, LinesWithoutATimestampGroupByTheirWholeText) {
  std::string out;
  LogCollapser c([&](std::string_view line) { out.append(line); });
  c.add(0, "n0", kT0, "  File \"train.py\", line 3");
  c.add(1, "n0", kT0, "  File \"train.py\", line 3");
  c.emit_all();
  EXPECT_EQ(out, "[ranks 0-1 @ n0]   File \"train.py\", line 3\n");
}

TEST(RanksText, NamesOneRankOrRanges) {
  EXPECT_EQ(ranks_text({2}), "rank 2");
  EXPECT_EQ(ranks_text({3, 0, 1, 1}), "ranks 0-1,3");
}

}  // namespace
}  // namespace dtrain::report
