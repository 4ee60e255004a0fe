// The rank files' names, as every writer makes them and every reader recognises them.
#include "records/rank_files.hpp"

#include <gtest/gtest.h>

#include <string>

namespace dtrain::records {
namespace {

TEST(RankFileName, FiveDigitsZeroPadded) {
  EXPECT_EQ(rank_file_name(7, kLogExtension), "rank-00007.log");
  EXPECT_EQ(rank_file_name(123456, kMetricsExtension), "rank-123456.jsonl");
}

// What messages call all ranks' files: the name with the digits spelled out.
TEST(RankFileName, PatternNamesEveryRank) {
  EXPECT_EQ(rank_file_pattern(kLogExtension), "rank-NNNNN.log");
  EXPECT_EQ(rank_file_pattern(kMetricsExtension), "rank-NNNNN.jsonl");
}

TEST(RankFileName, ParsesWhatItFormatsAndNothingElse) {
  EXPECT_EQ(parse_rank_file_name(rank_file_name(42, kLogExtension), kLogExtension), 42);
  EXPECT_EQ(parse_rank_file_name("rank-123456.jsonl", kMetricsExtension), 123456);
  EXPECT_FALSE(parse_rank_file_name("rank-00042.log", kMetricsExtension));
  EXPECT_FALSE(parse_rank_file_name("rank-00042.jsonl", kLogExtension));
  EXPECT_FALSE(parse_rank_file_name("rank-0042.log", kLogExtension));  // fewer than five digits
  EXPECT_FALSE(parse_rank_file_name("rank-0004x.log", kLogExtension));
  EXPECT_FALSE(parse_rank_file_name("rank-00042xlog", kLogExtension));
  EXPECT_FALSE(parse_rank_file_name("job-00042.log", kLogExtension));
  EXPECT_FALSE(parse_rank_file_name("rank-00042.log.bak", kLogExtension));
}

// rank-000001.log beside rank-00001.log was counted as another rank (a ninth of eight).
TEST(RankFileName, OnlyTheNameTheWritersGiveIsARankFile) {
  EXPECT_FALSE(parse_rank_file_name("rank-000001.log", kLogExtension));
  EXPECT_FALSE(parse_rank_file_name("rank-0000001.jsonl", kMetricsExtension));
  EXPECT_FALSE(parse_rank_file_name("rank-012345.log", kLogExtension));
  EXPECT_EQ(parse_rank_file_name("rank-99999.log", kLogExtension), 99999);
  EXPECT_EQ(parse_rank_file_name("rank-100000.log", kLogExtension), 100000);
  for (int rank : {0, 1, 99999, 100000, 2147483647}) {
    EXPECT_EQ(parse_rank_file_name(rank_file_name(rank, kLogExtension), kLogExtension), rank);
  }
}

}  // namespace
}  // namespace dtrain::records
