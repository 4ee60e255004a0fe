// Scaling tables and plots across runs of one job at several sizes.
#include "report/scaling.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/errors.hpp"

namespace dtrain::report {
namespace {

TEST(Scaling, SpeedupAndEfficiencyAgainstTheSmallestRun) {
  const auto t = scaling_table({{"big", "resnet", 8, 8, 3000},
                                {"small", "resnet", 2, 2, 1000},
                                {"mid", "resnet", 4, std::nullopt, 1800}});
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0].run.label, "small");
  EXPECT_DOUBLE_EQ(t.rows[1].speedup, 1.8);
  EXPECT_DOUBLE_EQ(t.rows[1].efficiency, 0.9);
  EXPECT_DOUBLE_EQ(t.rows[2].speedup, 3.0);
  EXPECT_DOUBLE_EQ(t.rows[2].efficiency, 0.75);
  EXPECT_FALSE(t.mixed_jobs);
  const std::string text = format_scaling_table(t);
  EXPECT_NE(
      text.find("mid                               4     -         1800     1.80       90.0%"),
      std::string::npos)
      << text;
  EXPECT_EQ(scaling_to_json(t)["rows"][2]["efficiency"], 0.75);
  const std::string svg = scaling_svg(t);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<polyline class=\"measured\""), std::string::npos);
  EXPECT_THROW(scaling_table({{"empty", "", 0, std::nullopt, 0}}), UsageError);
}

// The plots' numbers read as the tables' do (report/plain_number.hpp): the axis of a run near
// 10,000 samples/s read `1e+04`, its bars `1.009e+04`.
TEST(Scaling, PlotsShowPlainNumbers) {
  RunStats stats;
  for (int r = 0; r < 2; ++r) {
    RankStats rs;
    rs.rank = r;
    rs.samples_per_second = r == 0 ? 10093 : 8300;
    stats.ranks.push_back(rs);
  }
  const std::string ranks = ranks_svg(stats, "samples/s per rank: run");
  EXPECT_NE(ranks.find("text-anchor=\"end\">20000</text>"), std::string::npos) << ranks;
  EXPECT_NE(ranks.find("text-anchor=\"end\">12000</text>"), std::string::npos) << ranks;
  EXPECT_NE(ranks.find("rank 0 on ?: 10093 samples/s"), std::string::npos) << ranks;
  EXPECT_NE(ranks.find(">median 8300</text>"), std::string::npos) << ranks;
  EXPECT_EQ(ranks.find("e+"), std::string::npos) << ranks;
  const std::string scaling = scaling_svg(scaling_table(
      {{"one", "resnet", 1, std::nullopt, 10093}, {"two", "resnet", 2, std::nullopt, 18000}}));
  EXPECT_NE(scaling.find("text-anchor=\"end\">20000</text>"), std::string::npos) << scaling;
  EXPECT_NE(scaling.find("one: 10093 samples/s"), std::string::npos) << scaling;
  EXPECT_EQ(scaling.find("e+"), std::string::npos) << scaling;
}

}  // namespace
}  // namespace dtrain::report
