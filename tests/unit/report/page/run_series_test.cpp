// The report's charts over time: throughput per bin, the step time split, the heat map of step
// time, the slowest collectives and the resource bands, from synthetic metric records.
#include "report/page/run_series.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace dtrain::report {
namespace {

constexpr double kT0 = 1795341600.0;

records::MetricRecord step(int rank, double end, double seconds, long long samples, double comm = 0,
                           double data = 0) {
  records::MetricRecord r;
  r.version = 2;
  r.rank = rank;
  r.time = kT0 + end;
  r.seconds = seconds;
  r.samples = samples;
  r.comm_seconds = comm;
  r.data_seconds = data;
  return r;
}

records::MetricRecord coll(int rank, double t, long long seq, bool enter) {
  records::MetricRecord r;
  r.version = 2;
  r.type = records::RecordType::kCollective;
  r.rank = rank;
  r.time = kT0 + t;
  r.seq = seq;
  r.op = "allreduce";
  r.bytes = 4096;
  r.enter = enter;
  return r;
}

records::MetricRecord resource(int rank, double t, double cpu, long long rss,
                               std::optional<double> gpu_util = {}) {
  records::MetricRecord r;
  r.version = 2;
  r.type = records::RecordType::kResource;
  r.rank = rank;
  r.time = kT0 + t;
  r.interval = 1;
  r.cpu_percent = cpu;
  r.rss_bytes = rss;
  if (gpu_util) r.gpu = records::GpuSample{rank, gpu_util, {}, {}};
  return r;
}

// Two ranks stepping 1 s each for 100 s; rank 1 at half the samples.
SeriesBuilder two_ranks() {
  SeriesBuilder b;
  for (int i = 1; i <= 100; ++i) {
    b.add(step(0, i, 1.0, 100, 0.25, 0.25));
    b.add(step(1, i, 1.0, 50, 0.5, 0));
  }
  b.set_host(0, "node0");
  b.set_host(1, "node1");
  return b;
}

TEST(RunSeries, BinsThroughputPerRankAndInTotal) {
  const RunSeries s = two_ranks().finish();
  ASSERT_EQ(s.bins, kTimeBins);
  EXPECT_DOUBLE_EQ(s.start, kT0);
  EXPECT_DOUBLE_EQ(s.bin_seconds, 1.0);
  // Every bin holds one step of each rank: 150 samples in 1 s.
  for (int i = 0; i < s.bins; ++i) EXPECT_NEAR(s.total_samples_per_second[i], 150, 1e-9) << i;
  EXPECT_DOUBLE_EQ(s.rank_samples_per_second.min[50], 50);
  EXPECT_DOUBLE_EQ(s.rank_samples_per_second.max[50], 100);
  EXPECT_DOUBLE_EQ(s.rank_samples_per_second.median[50], 75);
  ASSERT_EQ(s.rank_lines.size(), 2u);  // few ranks: a line each
  EXPECT_DOUBLE_EQ(s.rank_lines.at(1)[3], 50);
  ASSERT_EQ(s.node_samples_per_second.size(), 2u);
  EXPECT_DOUBLE_EQ(s.node_samples_per_second.at("node0")[10], 100);
}

TEST(RunSeries, SplitsStepTimeIntoComputeCollectivesAndData) {
  const RunSeries s = two_ranks().finish();
  // 2 s of steps per bin: 0.75 s in collectives, 0.25 s loading data, the rest compute.
  EXPECT_DOUBLE_EQ(s.comm_share[7], 0.375);
  EXPECT_DOUBLE_EQ(s.data_share[7], 0.125);
  EXPECT_DOUBLE_EQ(s.compute_share[7], 0.5);
}

// Steps of 0.3 s every 0.5 s (a pause after each) over 20 s: bins of the pace, not 0.2 s ones
// alternating between full and empty.
TEST(RunSeries, ABinHoldsAtLeastTheTimeFromOneStepToTheNext) {
  SeriesBuilder b;
  for (int i = 1; i <= 40; ++i) b.add(step(0, i * 0.5, 0.3, 30));
  const RunSeries s = b.finish();
  EXPECT_EQ(s.bins, 39);  // 19.8 s / 0.5 s
  for (int i = 1; i + 1 < s.bins; ++i) EXPECT_NEAR(s.total_samples_per_second[i], 60, 2) << i;
}

TEST(RunSeries, AGapInTheRecordsShowsAsNoThroughput) {
  SeriesBuilder b;
  for (int i = 1; i <= 40; ++i) b.add(step(0, i, 1.0, 10));
  for (int i = 61; i <= 100; ++i) b.add(step(0, i, 1.0, 10));
  const RunSeries s = b.finish();
  EXPECT_DOUBLE_EQ(s.total_samples_per_second[50], 0);
  EXPECT_TRUE(std::isnan(s.rank_samples_per_second.median[50]));
  EXPECT_TRUE(std::isnan(s.comm_share[50]));
  EXPECT_DOUBLE_EQ(s.total_samples_per_second[70], 10);
}

TEST(RunSeries, TheHeatMapGroupsRanksAndKeepsEachRowsSlowestRank) {
  SeriesBuilder b;
  constexpr int kRanks = 1024;
  for (int rank = 0; rank < kRanks; ++rank) {
    for (int i = 1; i <= 200; ++i) b.add(step(rank, i * 10.0, rank == 777 ? 3.0 : 1.0, 32));
  }
  const RunSeries s = b.finish();
  ASSERT_EQ(s.heat.size(), static_cast<std::size_t>(kHeatRows));
  EXPECT_EQ(s.heat_rows.front(), "0-7");
  EXPECT_EQ(s.heat_rows.back(), "1016-1023");
  EXPECT_TRUE(s.rank_lines.empty());  // a band, not 1,024 lines
  const std::size_t slow_row = 777 / 8;
  EXPECT_EQ(s.heat_rows[slow_row], "776-783");
  const auto slowest = [](const std::vector<double>& row) {
    double m = 0;
    for (double v : row) {
      if (std::isfinite(v)) m = std::max(m, v);
    }
    return m;
  };
  EXPECT_DOUBLE_EQ(slowest(s.heat[slow_row]), 3.0);
  EXPECT_DOUBLE_EQ(slowest(s.heat[slow_row + 1]), 1.0);
  EXPECT_DOUBLE_EQ(slowest(s.heat[0]), 1.0);
  EXPECT_EQ(s.bins, kTimeBins);  // 1,993 s, a step every 10 s: 100 bins of 19.93 s
}

TEST(RunSeries, TheSlowestCollectivesNameTheRankTheOthersWaitedFor) {
  SeriesBuilder b;
  for (int seq = 0; seq < 20; ++seq) {
    const double t = seq * 10.0;
    const double late = seq == 12 ? 4.0 : 0.01;  // rank 2 is 4 s late for #12
    for (int rank = 0; rank < 3; ++rank) b.add(coll(rank, t + (rank == 2 ? late : 0), seq, true));
    for (int rank = 0; rank < 3; ++rank) b.add(coll(rank, t + late + 0.02, seq, false));
  }
  b.add(coll(0, 500, 20, true));  // never left: for `logs --hang`, not here
  const RunSeries s = b.finish();
  ASSERT_EQ(s.slow_collectives.size(), kSlowCollectives);
  const SlowCollective& worst = s.slow_collectives.front();
  EXPECT_EQ(worst.seq, 12);
  EXPECT_EQ(worst.last_rank, 2);
  EXPECT_EQ(worst.ranks, 3);
  EXPECT_NEAR(worst.wait_seconds, 4.0, 1e-6);
  EXPECT_NEAR(worst.seconds, 4.02, 1e-6);
  EXPECT_EQ(worst.op, "allreduce");
}

TEST(RunSeries, ResourceSamplesBecomeBandsAndPerRankFigures) {
  SeriesBuilder b;
  for (int i = 1; i <= 100; ++i) {
    b.add(step(0, i, 1.0, 10));
    b.add(resource(0, i, 100, 1000 + i, 80.0));
    b.add(resource(1, i, 50, 2000, 40.0));
  }
  const RunSeries s = b.finish();
  ASSERT_TRUE(s.resources);
  EXPECT_TRUE(s.resources->gpu);
  EXPECT_DOUBLE_EQ(s.resources->cpu_percent.min[40], 50);
  EXPECT_DOUBLE_EQ(s.resources->cpu_percent.max[40], 100);
  EXPECT_DOUBLE_EQ(s.resources->gpu_util_percent.median[40], 60);
  EXPECT_TRUE(std::isnan(s.resources->gpu_power_watts.median[40]));  // not sampled: absent
}

TEST(RunSeries, WithoutResourceSamplesThereAreNone) {
  const RunSeries s = two_ranks().finish();
  EXPECT_FALSE(s.resources);
  const RunSeries empty = SeriesBuilder().finish();
  EXPECT_EQ(empty.bins, 0);
}

}  // namespace
}  // namespace dtrain::report
