#include "rank_log.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dtrain::cli {
namespace {

TEST(LogTimestamp, Rfc3339UtcWithMicroseconds) {
  using namespace std::chrono;
  const system_clock::time_point t{seconds(1795342800) + microseconds(123456)};
  EXPECT_EQ(format_log_timestamp(t), "2026-11-22T10:20:00.123456Z");
  EXPECT_EQ(format_log_timestamp(system_clock::time_point{}), "1970-01-01T00:00:00.000000Z");
}

TEST(RankFileName, FiveDigitsZeroPadded) {
  EXPECT_EQ(rank_file_name(7, "log"), "rank-00007.log");
  EXPECT_EQ(rank_file_name(123456, "jsonl"), "rank-123456.jsonl");
}

TEST(LineSplitter, JoinsPiecesAndSplitsLines) {
  std::vector<std::string> lines;
  LineSplitter split([&](std::string_view l) { lines.emplace_back(l); });
  split.feed("hel");
  split.feed("lo\nwor");
  split.feed("ld\n\nlast");
  EXPECT_EQ(lines, (std::vector<std::string>{"hello", "world", ""}));
  split.finish();
  EXPECT_EQ(lines.back(), "last");
  split.finish();
  EXPECT_EQ(lines.size(), 4u);
}

TEST(LineSplitter, CutsRunawayLinesToBoundMemory) {
  std::vector<std::size_t> sizes;
  LineSplitter split([&](std::string_view l) { sizes.push_back(l.size()); });
  split.feed(std::string(LineSplitter::kMaxLine * 2 + 10, 'x'));
  EXPECT_EQ(sizes, (std::vector<std::size_t>{LineSplitter::kMaxLine, LineSplitter::kMaxLine}));
  split.finish();
  EXPECT_EQ(sizes.back(), 10u);
}

}  // namespace
}  // namespace dtrain::cli
