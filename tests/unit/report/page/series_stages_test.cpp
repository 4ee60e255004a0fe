// The stages of the report's charts over time (series_stages.hpp), each alone: the slowest
// collectives, the time axis, steps shared among bins, throughput and the step time split, the
// lines per node, the heat map and the resource bands.
#include "report/page/series_stages.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace dtrain::report::series {
namespace {

Step step(double end, double seconds, long long samples, double comm = 0, double data = 0) {
  return Step{end, seconds, comm, data, samples, 0, 1};
}

TEST(SeriesStages, SlowestCollectivesAreTheLongestLeftOnesSlowestFirst) {
  Collectives c;
  for (long long seq = 0; seq < 14; ++seq) {
    // #seq lasts seq/10 s; rank 1 entered last, 0.01 s after the first.
    c[{0, seq}] =
        Collective{"allreduce", 4096, 100.0, 100.01, 100.0 + static_cast<double>(seq) / 10, 1, 2};
  }
  c[{0, 20}] = Collective{"allreduce", 4096, 200.0, 200.0, 0.0, 0, 2};  // never left: a hang
  const auto slow = slowest_collectives(c);
  ASSERT_EQ(slow.size(), kSlowCollectives);
  EXPECT_EQ(slow.front().seq, 13);
  EXPECT_EQ(slow.back().seq, 4);
  EXPECT_NEAR(slow.front().seconds, 1.3, 1e-9);
  EXPECT_NEAR(slow.front().wait_seconds, 0.01, 1e-9);
  EXPECT_EQ(slow.front().last_rank, 1);
  EXPECT_EQ(slow.front().ranks, 2);
}

TEST(SeriesStages, TheTimeAxisSpansStepsAndSamplesInBinsNoShorterThanAStep) {
  EXPECT_FALSE(time_axis({}, {}));
  Steps steps;
  for (int i = 1; i <= 10; ++i) steps[0].push_back(step(10.0 * i, 10.0, 1));  // 0-100 s
  Samples samples;
  samples[0].push_back(Sample{110.0, 5.0, 50.0, {}, {}, {}, {}, {}});  // to 110 s
  const auto axis = time_axis(steps, samples);
  ASSERT_TRUE(axis);
  EXPECT_DOUBLE_EQ(axis->start, 0.0);
  EXPECT_EQ(axis->bins, 11);  // 110 s of 10 s steps: never the 100 a long run gets
  EXPECT_DOUBLE_EQ(axis->width, 10.0);
  EXPECT_EQ(axis->bin_of(-5), 0);
  EXPECT_EQ(axis->bin_of(25), 2);
  EXPECT_EQ(axis->bin_of(500), 10);
}

TEST(SeriesStages, AStepIsSharedAmongTheBinsItRanInByItsTimeInEach) {
  const TimeAxis axis{0.0, 1.0, 4};
  Steps steps;
  steps[3].push_back(step(2.5, 2.0, 100, 1.0, 0.5));  // 0.5-2.5 s: a quarter, a half, a quarter
  const Cells cells = step_cells(steps, axis);
  ASSERT_EQ(cells.at(3).size(), 4u);
  EXPECT_DOUBLE_EQ(cells.at(3)[0].samples, 25);
  EXPECT_DOUBLE_EQ(cells.at(3)[1].samples, 50);
  EXPECT_DOUBLE_EQ(cells.at(3)[1].seconds, 1.0);
  EXPECT_DOUBLE_EQ(cells.at(3)[1].comm, 0.5);
  EXPECT_DOUBLE_EQ(cells.at(3)[2].steps, 0.25);
  EXPECT_DOUBLE_EQ(cells.at(3)[3].samples, 0);
}

TEST(SeriesStages, ThroughputSumsTheRanksAndTheSplitSharesTheirStepTime) {
  const TimeAxis axis{0.0, 2.0, 2};
  Cells cells;
  cells[0] = {Cell{100, 1.0, 0.5, 0.25, 1}, Cell{}};
  cells[1] = {Cell{50, 1.0, 0.0, 0.0, 1}, Cell{}};
  RunSeries out;
  throughput_and_split(cells, axis, out);
  EXPECT_DOUBLE_EQ(out.total_samples_per_second[0], 75);  // 150 samples in 2 s
  EXPECT_DOUBLE_EQ(out.total_samples_per_second[1], 0);
  EXPECT_DOUBLE_EQ(out.rank_samples_per_second.min[0], 50);
  EXPECT_DOUBLE_EQ(out.rank_samples_per_second.max[0], 100);
  EXPECT_TRUE(std::isnan(out.rank_samples_per_second.median[1]));
  EXPECT_EQ(out.rank_lines.size(), 2u);
  EXPECT_DOUBLE_EQ(out.comm_share[0], 0.25);
  EXPECT_DOUBLE_EQ(out.data_share[0], 0.125);
  EXPECT_DOUBLE_EQ(out.compute_share[0], 0.625);
  EXPECT_TRUE(std::isnan(out.compute_share[1]));
}

TEST(SeriesStages, NodeLinesInNaturalOrderOnlyWhenEveryHostIsKnown) {
  const TimeAxis axis{0.0, 1.0, 1};
  Cells cells;
  for (int r = 0; r < 3; ++r) cells[r] = {Cell{10.0 * (r + 1), 1, 0, 0, 1}};
  const std::map<int, std::string> hosts{{0, "node10"}, {1, "node2"}, {2, "node2"}};
  const auto lines = node_lines(cells, axis, hosts);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines.begin()->first, "node2");
  EXPECT_DOUBLE_EQ(lines.at("node2")[0], 50);
  EXPECT_DOUBLE_EQ(lines.at("node10")[0], 10);
  EXPECT_TRUE(node_lines(cells, axis, {{0, "node10"}, {1, "node2"}}).empty());   // rank 2's?
  EXPECT_TRUE(node_lines(cells, axis, {{0, "a"}, {1, "a"}, {2, "a"}}).empty());  // one node
}

TEST(SeriesStages, TheHeatMapKeepsEachRowsSlowestRank) {
  Cells cells;
  for (int r = 0; r < 2 * kHeatRows; ++r) {
    cells[r] = {Cell{1, r == 7 ? 3.0 : 1.0, 0, 0, 1}, Cell{}};
  }
  const HeatMap heat = heat_map(cells, 2);
  ASSERT_EQ(heat.rows.size(), static_cast<std::size_t>(kHeatRows));
  EXPECT_EQ(heat.rows[3], "6-7");
  EXPECT_DOUBLE_EQ(heat.cells[3][0], 3.0);
  EXPECT_DOUBLE_EQ(heat.cells[2][0], 1.0);
  EXPECT_TRUE(std::isnan(heat.cells[3][1]));
  EXPECT_TRUE(heat_map({}, 2).rows.empty());
  Cells one{{5, {Cell{1, 2.0, 0, 0, 2}}}};
  EXPECT_EQ(heat_map(one, 1).rows, std::vector<std::string>{"5"});
  EXPECT_DOUBLE_EQ(heat_map(one, 1).cells[0][0], 1.0);  // 2 s over 2 steps
}

TEST(SeriesStages, ResourceBandsAverageEachBinAndKeepTheMemoryPeak) {
  const TimeAxis axis{0.0, 10.0, 2};
  EXPECT_FALSE(resource_bands({}, axis));
  Samples samples;
  samples[0] = {Sample{2, 2, 40.0, 100, {}, {}, {}, {}}, Sample{4, 2, 60.0, 300, {}, {}, {}, {}}};
  samples[1] = {Sample{4, 2, 90.0, 200, 0, 80.0, 1000, 250.0}};
  const auto res = resource_bands(samples, axis);
  ASSERT_TRUE(res);
  EXPECT_TRUE(res->gpu);
  EXPECT_DOUBLE_EQ(res->cpu_percent.min[0], 50);  // rank 0's mean of 40 and 60
  EXPECT_DOUBLE_EQ(res->cpu_percent.max[0], 90);
  EXPECT_DOUBLE_EQ(res->rss_bytes.min[0], 200);  // rank 1's only
  EXPECT_DOUBLE_EQ(res->rss_bytes.max[0], 300);  // rank 0's peak, not its mean
  EXPECT_DOUBLE_EQ(res->gpu_util_percent.median[0], 80);
  EXPECT_TRUE(std::isnan(res->cpu_percent.median[1]));
}

TEST(SeriesStages, ARanksStepsAreBoundedWithTheirSumsAndTimeSpan) {
  // 50,000 steps of 72 ms back to back, then after 10 minutes down (a restart) 10,000 more.
  Steps steps;
  auto& of_rank = steps[0];
  double t = 1000;
  const auto run = [&](int n) {
    for (int i = 0; i < n; ++i) {
      t += 0.072;
      of_rank.push_back(step(t, 0.072, 32, 0.02, 0.001));
      bound_steps(of_rank);
      ASSERT_LE(of_rank.size(), kKeptSeriesSteps);
    }
  };
  run(50000);
  const double down_from = t;
  t += 600;
  run(10000);
  long long samples = 0, n = 0;
  double seconds = 0;
  bool gap_kept = false;
  for (std::size_t i = 0; i < of_rank.size(); ++i) {
    samples += of_rank[i].samples;
    n += of_rank[i].steps;
    seconds += of_rank[i].seconds;
    const double begin = of_rank[i].time - std::max(of_rank[i].span, of_rank[i].seconds);
    // No entry spreads its steps over the downtime.
    EXPECT_FALSE(begin < down_from - 1e-6 && of_rank[i].time > down_from + 1);
    gap_kept = gap_kept || (i > 0 && begin > of_rank[i - 1].time + 500);
  }
  EXPECT_TRUE(gap_kept);
  EXPECT_EQ(samples, 60000 * 32LL);
  EXPECT_EQ(n, 60000);
  EXPECT_NEAR(seconds, 60000 * 0.072, 1e-6);
  const auto axis = time_axis(steps, {});
  ASSERT_TRUE(axis);
  EXPECT_NEAR(axis->start, 1000, 1e-6);
  EXPECT_NEAR(axis->start + axis->width * axis->bins, t, 1e-6);
}

TEST(SeriesStages, MergedStepsRunFromTheFirstsStartToTheLastsEnd) {
  const Step m = merged_steps(step(10, 1, 5, 0.5), step(12, 1.5, 7, 0.25, 0.1));
  EXPECT_DOUBLE_EQ(m.time, 12);
  EXPECT_DOUBLE_EQ(m.span, 3);
  EXPECT_DOUBLE_EQ(m.seconds, 2.5);
  EXPECT_DOUBLE_EQ(m.comm, 0.75);
  EXPECT_DOUBLE_EQ(m.data, 0.1);
  EXPECT_EQ(m.samples, 12);
  EXPECT_EQ(m.steps, 2);
}

}  // namespace
}  // namespace dtrain::report::series
