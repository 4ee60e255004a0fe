// StatsBuilder::finish's stages on their own (report/stats_stages.hpp): what each computes from
// what the builder kept.
#include "report/stats_stages.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <memory>

namespace dtrain::report {
namespace {

KeptSteps kept(long long step, long long samples, double seconds, std::optional<double> comm = {},
               std::optional<double> data = {}) {
  return {step, samples, seconds, comm, data, 1, nullptr};
}

KeptSteps interval(long long first, long long count, double each_seconds, double comm_each) {
  auto histogram = std::make_shared<records::LogHistogram>();
  histogram->add(each_seconds, count);
  const double n = static_cast<double>(count);
  return {first, 10 * count, each_seconds * n, comm_each * n, std::nullopt, count, histogram};
}

TEST(StatsStages, RankStatsSumsCapsCommAndTakesExactPercentilesFromSteps) {
  const RankStats s = rank_stats(3, {kept(0, 10, 1.0, 0.5, 0.1), kept(1, 10, 2.0, 3.0),
                                     kept(2, 10, 3.0, 0.0), kept(3, 10, 4.0, 1.0)});
  EXPECT_EQ(s.rank, 3);
  EXPECT_EQ(s.host, "?");
  EXPECT_EQ(s.steps, 4);
  EXPECT_EQ(s.samples, 40);
  EXPECT_DOUBLE_EQ(s.seconds, 10.0);
  // Step 1's 3 s of comm are capped at its 2 s.
  EXPECT_DOUBLE_EQ(s.comm_seconds, 0.5 + 2.0 + 0.0 + 1.0);
  EXPECT_DOUBLE_EQ(s.comm_share, 0.35);
  EXPECT_TRUE(s.has_data);
  EXPECT_DOUBLE_EQ(s.data_seconds, 0.1);
  EXPECT_DOUBLE_EQ(s.samples_per_second, 4.0);
  EXPECT_DOUBLE_EQ(s.p50_step_seconds, 2.0);
  EXPECT_DOUBLE_EQ(s.p95_step_seconds, 4.0);
}

TEST(StatsStages, RankStatsReadsPercentilesFromTheMergedHistogramOnceAnIntervalCounts) {
  // 20 steps of 1 s, then an interval of 50 steps of 2 s and 50 of 3 s: p50 is 2 s and p95 3 s,
  // read from buckets (within 0.5 %, not the exact values), the whole steps among them.
  std::vector<KeptSteps> steps;
  for (long long i = 0; i < 20; ++i) steps.push_back(kept(i, 10, 1.0, 0.0));
  KeptSteps mixed = interval(20, 100, 2.5, 0.5);
  auto histogram = std::make_shared<records::LogHistogram>();
  histogram->add(2.0, 50);
  histogram->add(3.0, 50);
  mixed.histogram = histogram;
  steps.push_back(mixed);
  const RankStats s = rank_stats(0, steps);
  EXPECT_EQ(s.steps, 120);
  EXPECT_EQ(s.samples, 1200);
  EXPECT_DOUBLE_EQ(s.seconds, 270.0);
  EXPECT_NEAR(s.p50_step_seconds, 2.0, 0.01);
  EXPECT_NEAR(s.p95_step_seconds, 3.0, 0.015);
  EXPECT_NE(s.p50_step_seconds, 2.0);
}

TEST(StatsStages, LastBusySecondsSpreadsAnIntervalAndKeepsTheLast200) {
  // 150 whole steps of 1 s with 0.25 s in comm, then an interval of 100 steps of 2 s with 1 s in
  // comm each: the last 200 are 100 steps at 0.75, then 100 at 1.
  std::vector<KeptSteps> steps;
  for (long long i = 0; i < 150; ++i) steps.push_back(kept(i, 1, 1.0, 0.25));
  steps.push_back(interval(150, 100, 2.0, 1.0));
  const auto busy = last_busy_seconds(steps);
  ASSERT_EQ(busy.size(), kStragglerVerdictSteps);
  EXPECT_DOUBLE_EQ(busy.front(), 0.75);
  EXPECT_DOUBLE_EQ(busy[99], 0.75);
  EXPECT_DOUBLE_EQ(busy[100], 1.0);
  EXPECT_DOUBLE_EQ(busy.back(), 1.0);
}

TEST(StatsStages, RunTotalsGoAtTheSlowestRanksPaceAndSaturate) {
  RunStats out;
  out.ranks.resize(2);
  out.ranks[0].samples = 300;
  out.ranks[0].seconds = 1.5;
  out.ranks[1].samples = 300;
  out.ranks[1].seconds = 3;
  add_run_totals(out);
  EXPECT_EQ(out.total_samples, 600);
  EXPECT_DOUBLE_EQ(out.slowest_rank_seconds, 3.0);
  EXPECT_DOUBLE_EQ(out.total_samples_per_second, 200.0);
  RunStats huge;
  huge.ranks.resize(2);
  huge.ranks[0].samples = huge.ranks[1].samples = std::numeric_limits<long long>::max();
  add_run_totals(huge);
  EXPECT_EQ(huge.total_samples, std::numeric_limits<long long>::max());
}

TEST(StatsStages, NodesInNaturalOrderAndTheSlowRankNamed) {
  // Ranks 0-1 on node10, 2-3 on node2; rank 2 is busy 1.5x as long as the others.
  RunStats out;
  std::map<int, std::vector<double>> busy;
  for (int r = 0; r < 4; ++r) {
    RankStats s;
    s.rank = r;
    s.host = r < 2 ? "node10" : "node2";
    s.steps = 200;
    s.samples = 2000;
    s.seconds = 200;
    s.has_comm = true;
    s.comm_seconds = r == 2 ? 0 : 50;
    out.ranks.push_back(s);
    busy[r] = std::vector<double>(200, r == 2 ? 1.0 : 0.75);
  }
  add_stragglers_and_nodes(out, busy, 0.1);
  ASSERT_EQ(out.nodes.size(), 2u);
  EXPECT_EQ(out.nodes[0].host, "node2");
  EXPECT_EQ(out.nodes[0].ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(out.nodes[1].host, "node10");
  EXPECT_DOUBLE_EQ(out.nodes[1].samples_per_second, 20.0);
  ASSERT_FALSE(out.stragglers.empty());
  EXPECT_EQ(out.stragglers[0].kind, "rank");
  EXPECT_EQ(out.stragglers[0].rank, 2);
  // One host unknown: no node table.
  RunStats unknown = out;
  unknown.nodes.clear();
  unknown.ranks[3].host = "?";
  add_stragglers_and_nodes(unknown, busy, 0.1);
  EXPECT_TRUE(unknown.nodes.empty());
}

TEST(StatsStages, ResourceAveragesWeighCpuByIntervalAndLeaveOutMissingGpuReadings) {
  ResourceSums sums;
  sums.records = 2;
  sums.cpu_seconds = 1.0 * 5 + 3.0 * 1;  // 100 % over 5 s, 300 % over 1 s
  sums.interval = 6;
  sums.cpu_percent = 400;
  sums.rss_bytes = 300;
  sums.gpu = 1;
  sums.util = 80;
  sums.util_n = 1;
  const RankResources r = average_resources(5, sums);
  EXPECT_EQ(r.rank, 5);
  EXPECT_EQ(r.host, "?");
  EXPECT_NEAR(r.cpu_percent, 8.0 / 6 * 100, 1e-9);
  EXPECT_DOUBLE_EQ(r.rss_bytes, 150);
  EXPECT_EQ(r.gpu, 1);
  EXPECT_EQ(r.gpu_util_percent, 80.0);
  EXPECT_FALSE(r.gpu_memory_bytes);
  EXPECT_FALSE(r.gpu_power_watts);
}

TEST(StatsStages, RenumberedNoteNamesTheAttemptAndItsFirstStep) {
  EXPECT_EQ(renumbered_note(2, 0).substr(0, 70),
            "attempt 2 began at step 0, no later than the attempt before it: all of");
}

}  // namespace
}  // namespace dtrain::report
