#include "plan/stats.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace dtrain::plan {
namespace {

TEST(MetricRecord, ParsesTheMeterSchema) {
  auto r = parse_metric_record(
      R"({"v":1,"time":1.7e9,"rank":3,"step":7,"samples":128,"seconds":0.25})", "f:1");
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.step, 7);
  EXPECT_EQ(r.samples, 128);
  EXPECT_DOUBLE_EQ(r.seconds, 0.25);
}

TEST(MetricRecord, BadLinesNameTheFileLineAndField) {
  auto message = [](const char* line) {
    try {
      parse_metric_record(line, "rank-00001.jsonl:4");
    } catch (const MetricFormatError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message("not json"),
            "dtrain: stats: rank-00001.jsonl:4: expected one JSON object per line");
  EXPECT_EQ(message(R"({"v":1,"rank":0,"step":1,"seconds":1})"),
            "dtrain: stats: rank-00001.jsonl:4: missing field \"samples\"");
  EXPECT_EQ(message(R"({"v":1,"rank":0,"step":1,"samples":"x","seconds":1})"),
            "dtrain: stats: rank-00001.jsonl:4: field \"samples\": expected a number, got \"x\"");
  EXPECT_EQ(message(R"({"v":2,"rank":0,"step":1,"samples":1,"seconds":1})"),
            "dtrain: stats: rank-00001.jsonl:4: schema version 2 is not supported; expected 1");
}

TEST(Stats, SumsPerRankAndTotalsAtTheSlowestRanksPace) {
  // rank 0: 300 samples in 1.5 s; rank 1: 300 samples in 3 s.
  std::vector<MetricRecord> records = {
      {0, 0, 100, 0.5}, {1, 0, 100, 1.0}, {0, 1, 200, 1.0}, {1, 1, 200, 2.0}};
  const RunStats s = compute_stats(records);
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_EQ(s.ranks[0].steps, 2);
  EXPECT_EQ(s.ranks[0].samples, 300);
  EXPECT_DOUBLE_EQ(s.ranks[0].samples_per_second, 200.0);
  EXPECT_DOUBLE_EQ(s.ranks[1].samples_per_second, 100.0);
  EXPECT_EQ(s.total_samples, 600);
  EXPECT_DOUBLE_EQ(s.slowest_rank_seconds, 3.0);
  EXPECT_DOUBLE_EQ(s.total_samples_per_second, 200.0);
  EXPECT_EQ(format_stats_table(s),
            "  rank    steps        samples    seconds    samples/s\n"
            "     0        2            300      1.500          200\n"
            "     1        2            300      3.000          100\n"
            " total                     600      3.000          200\n");
  EXPECT_EQ(stats_to_json(s)["total"]["samples_per_second"], 200.0);
}

}  // namespace
}  // namespace dtrain::plan
