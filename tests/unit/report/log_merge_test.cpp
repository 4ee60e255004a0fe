// The merge behind `dtrain logs`: order (time, then rank, then file order), prefixes, filters,
// partial lines, long lines and bounded buffers, on in-memory sources.
#include "report/log_merge.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/errors.hpp"
#include "records/log_line.hpp"

namespace dtrain::report {
namespace {

// Hands out its text a few bytes at a time, as a slow pipe or a small read would.
class StringSource : public ByteSource {
 public:
  StringSource(std::string text, std::size_t chunk) : text_(std::move(text)), chunk_(chunk) {}
  std::size_t read(char* buffer, std::size_t capacity) override {
    const std::size_t n = std::min({capacity, chunk_, text_.size() - pos_});
    std::copy_n(text_.data() + pos_, n, buffer);
    pos_ += n;
    return n;
  }
  void append(const std::string& more) { text_ += more; }

 private:
  std::string text_;
  std::size_t chunk_;
  std::size_t pos_ = 0;
};

std::string ts(int second, int micros) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "2026-11-22T10:00:%02d.%06dZ", second, micros);
  return buf;
}

std::vector<std::string> merge(std::vector<std::string> files, LineFilter filter = {},
                               std::size_t chunk = 7, std::size_t buffer = 64) {
  std::vector<MergeInput> inputs;
  for (std::size_t i = 0; i < files.size(); ++i) {
    inputs.push_back({static_cast<int>(i), "n" + std::to_string(i / 2),
                      std::make_unique<StringSource>(files[i], chunk)});
  }
  LogMerger merger(std::move(inputs), filter, buffer);
  std::vector<std::string> out;
  merger.merge_available(true, [&](std::size_t input, std::string_view line) {
    std::string text;
    append_prefixed(text, line,
                    rank_prefix(merger.inputs()[input].rank, merger.inputs()[input].host));
    text.pop_back();
    out.push_back(text);
  });
  return out;
}

TEST(LogMerge, OrdersByTimeThenRankThenFileOrderWithRankAndHostPrefixes) {
  const auto out = merge({
      ts(1, 0) + " a0\n" + ts(3, 0) + " a1\n" + ts(3, 0) + " a2\n",
      ts(0, 5) + " b0\n" + ts(3, 0) + " b1\n",
      ts(2, 0) + " c0\n" + ts(3, 0) + " c1\n",
  });
  const std::vector<std::string> expected = {
      ts(0, 5) + " [1@n0] b0", ts(1, 0) + " [0@n0] a0", ts(2, 0) + " [2@n1] c0",
      ts(3, 0) + " [0@n0] a1", ts(3, 0) + " [0@n0] a2", ts(3, 0) + " [1@n0] b1",
      ts(3, 0) + " [2@n1] c1",
  };
  EXPECT_EQ(out, expected);
}

TEST(LogMerge, MatchesAStableSortOfManyRandomLogs) {
  // 40 files, tiny buffers and reads: the merge must equal a stable sort by (time, rank).
  std::mt19937 rng(7);
  std::vector<std::string> files(40);
  std::vector<std::tuple<std::int64_t, int, int, std::string>> all;
  for (int f = 0; f < 40; ++f) {
    int t = 0;
    for (int i = 0; i < 50; ++i) {
      t += static_cast<int>(rng() % 3);  // equal timestamps are frequent
      const std::string line = ts(t / 1000000, t % 1000000) + " f" + std::to_string(f) + " i" +
                               std::to_string(i) + std::string(rng() % 90, 'x');
      files[f] += line + "\n";
      all.emplace_back(t, f, i, line);
    }
  }
  std::sort(all.begin(), all.end());
  std::vector<MergeInput> inputs;
  for (int f = 0; f < 40; ++f) {
    inputs.push_back({f, "h", std::make_unique<StringSource>(files[f], 1 + rng() % 50)});
  }
  LogMerger merger(std::move(inputs), {}, 32);
  std::vector<std::string> out;
  merger.merge_available(true, [&](std::size_t, std::string_view l) { out.emplace_back(l); });
  ASSERT_EQ(out.size(), all.size());
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], std::get<3>(all[i])) << i;
}

TEST(LogMerge, LinesWithoutTimestampFollowTheLineBeforeThem) {
  const auto out = merge({ts(1, 0) + " a0\ncontinued\n" + ts(5, 0) + " a1\n", ts(2, 0) + " b0\n"});
  const std::vector<std::string> expected = {ts(1, 0) + " [0@n0] a0", "[0@n0] continued",
                                             ts(2, 0) + " [1@n0] b0", ts(5, 0) + " [0@n0] a1"};
  EXPECT_EQ(out, expected);
}

TEST(LogMerge, ALongLineGrowsItsBufferAndALastLineWithoutNewlineCounts) {
  const std::string long_text(5000, 'y');
  const auto out = merge({ts(1, 0) + " " + long_text + "\n" + ts(2, 0) + " end"});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], ts(1, 0) + " [0@n0] " + long_text);
  EXPECT_EQ(out[1], ts(2, 0) + " [0@n0] end");
}

TEST(LogMerge, FiltersByTimeRangeAndPattern) {
  LineMatcher grep("err(or)?|peer");
  LineFilter f;
  f.since = parse_time_flag(ts(1, 0), "logs", "--since");
  f.until = parse_time_flag(ts(3, 0), "logs", "--until");
  f.grep = &grep;
  const auto out = merge({ts(0, 0) + " error early\n" + ts(1, 0) + " error a\n" + ts(2, 0) +
                              " fine\n" + ts(3, 0) + " peer closed\n" + ts(4, 0) + " error late\n",
                          ts(2, 5) + " ERR upper\n" + ts(2, 6) + " err b\n"},
                         f);
  const std::vector<std::string> expected = {
      ts(1, 0) + " [0@n0] error a", ts(2, 6) + " [1@n0] err b", ts(3, 0) + " [0@n0] peer closed"};
  EXPECT_EQ(out, expected);
}

TEST(LogMerge, FollowingKeepsPartialLinesUntilTheyEnd) {
  auto* a = new StringSource(ts(1, 0) + " a0\n" + ts(3, 0) + " a1 part", 100);
  auto* b = new StringSource(ts(2, 0) + " b0\n", 100);
  std::vector<MergeInput> inputs;
  inputs.push_back({0, "h", std::unique_ptr<ByteSource>(a)});
  inputs.push_back({1, "h", std::unique_ptr<ByteSource>(b)});
  LogMerger merger(std::move(inputs), {}, 64);
  std::vector<std::string> out;
  const auto emit = [&](std::size_t, std::string_view l) { out.emplace_back(l); };
  EXPECT_EQ(merger.merge_available(false, emit), 2u);
  a->append(" done\n");
  b->append(ts(4, 0) + " b1\n");
  EXPECT_EQ(merger.merge_available(false, emit), 2u);
  const std::vector<std::string> expected = {ts(1, 0) + " a0", ts(2, 0) + " b0",
                                             ts(3, 0) + " a1 part done", ts(4, 0) + " b1"};
  EXPECT_EQ(out, expected);
}

TEST(LastLines, KeepsTheLastNInOrder) {
  LastLines last(3);
  for (const char* l : {"1", "2", "3", "4", "5"}) last.add(l);
  EXPECT_EQ(last.lines(), (std::vector<std::string>{"3", "4", "5"}));
  LastLines few(3);
  few.add("only");
  EXPECT_EQ(few.lines(), (std::vector<std::string>{"only"}));
}

TEST(RankList, ParsesRangesAndNamesBadParts) {
  EXPECT_EQ(parse_rank_list("3"), (std::vector<int>{3}));
  EXPECT_EQ(parse_rank_list("5,0-2,1"), (std::vector<int>{0, 1, 2, 5}));
  try {
    parse_rank_list("0-2,x");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "dtrain: logs: --rank: expected ranks such as 3 or 0-3,7, got \"x\" in \"0-2,x\"");
  }
  EXPECT_THROW(parse_rank_list("3-1"), UsageError);
  EXPECT_THROW(parse_rank_list(""), UsageError);
}

TEST(Grep, ABadPatternIsNamed) {
  try {
    LineMatcher m("a(");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--grep \"a(\": expected a POSIX extended regular"),
              std::string::npos)
        << e.what();
  }
}

TEST(TimeFlag, AcceptsRfc3339AndNamesTheFlagOtherwise) {
  EXPECT_EQ(parse_time_flag("2026-11-22T10:00:00Z", "logs", "--since"), 1795341600LL * 1000000);
  EXPECT_EQ(parse_time_flag("2026-11-22 11:00:00.5+01:00", "logs", "--since"),
            1795341600LL * 1000000 + 500000);
  try {
    parse_time_flag("yesterday", "logs", "--until");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "dtrain: logs: --until: expected an RFC 3339 time such as 2026-11-22T10:00:00Z "
                 "or 2026-11-22T10:00:00.5+01:00, got \"yesterday\"");
  }
  EXPECT_THROW(parse_time_flag("2026-11-22T10:00:00", "logs", "--since"), UsageError);
}

}  // namespace
}  // namespace dtrain::report
