// The log line timestamp, formatted by the writers and parsed by the readers, and the splitter
// that turns pipe reads into lines.
#include "records/log_line.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dtrain::records {
namespace {

TEST(LogTimestamp, Rfc3339UtcWithMicroseconds) {
  using namespace std::chrono;
  const system_clock::time_point t{seconds(1795342800) + microseconds(123456)};
  EXPECT_EQ(format_log_time(t), "2026-11-22T10:20:00.123456Z");
  EXPECT_EQ(format_log_time(system_clock::time_point{}), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(format_log_time(-1), "1969-12-31T23:59:59.999999Z");
}

TEST(LogTimestamp, ParsesWhatTheWritersFormat) {
  const auto t = parse_log_timestamp("2026-11-22T10:00:00.123456Z text");
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, 1795341600LL * 1000000 + 123456);
  EXPECT_EQ(format_log_time(*t), "2026-11-22T10:00:00.123456Z");
  using namespace std::chrono;
  const system_clock::time_point now{microseconds(1795342800123456LL)};
  EXPECT_EQ(parse_log_timestamp(format_log_time(now) + " x"), 1795342800123456LL);
  EXPECT_FALSE(parse_log_timestamp("2026-11-22T10:00:00.123456Z"));  // no text after it
  EXPECT_FALSE(parse_log_timestamp("2026-13-22T10:00:00.123456Z x"));
  EXPECT_FALSE(parse_log_timestamp("hello"));
}

TEST(Rfc3339, FractionsOffsetsAndASpaceForTheT) {
  EXPECT_EQ(parse_rfc3339("2026-11-22T10:00:00Z"), 1795341600LL * 1000000);
  EXPECT_EQ(parse_rfc3339("2026-11-22 11:00:00.5+01:00"), 1795341600LL * 1000000 + 500000);
  EXPECT_EQ(parse_rfc3339("2026-11-22T09:30:00.000001-00:30"), 1795341600LL * 1000000 + 1);
  EXPECT_FALSE(parse_rfc3339("2026-11-22T10:00:00"));  // no zone
  EXPECT_FALSE(parse_rfc3339("2026-11-22T10:00:00.1234567Z"));
  EXPECT_FALSE(parse_rfc3339("2026-11-22T10:00:00.Z"));
  EXPECT_FALSE(parse_rfc3339("yesterday"));
}

TEST(UnixSeconds, RoundToTheNearestMicrosecond) {
  EXPECT_EQ(unix_seconds_to_micros(1.0000004), 1000000);
  EXPECT_EQ(unix_seconds_to_micros(1.0000006), 1000001);
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
}  // namespace dtrain::records
