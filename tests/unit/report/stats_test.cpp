#include "report/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

namespace dtrain::report {
namespace {

records::MetricRecord step(int rank, long long samples, double seconds,
                           std::optional<double> comm = {}, std::optional<double> data = {}) {
  records::MetricRecord r;
  r.version = comm ? 2 : 1;
  r.rank = rank;
  r.samples = samples;
  r.seconds = seconds;
  r.comm_seconds = comm;
  r.data_seconds = data;
  return r;
}

TEST(Stats, SumsPerRankAndTotalsAtTheSlowestRanksPace) {
  // rank 0: 300 samples in 1.5 s; rank 1: 300 samples in 3 s.
  std::vector<records::MetricRecord> records = {step(0, 100, 0.5), step(1, 100, 1.0),
                                                step(0, 200, 1.0), step(1, 200, 2.0)};
  const RunStats s = compute_stats(records);
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_EQ(s.ranks[0].steps, 2);
  EXPECT_EQ(s.ranks[0].samples, 300);
  EXPECT_DOUBLE_EQ(s.ranks[0].samples_per_second, 200.0);
  EXPECT_DOUBLE_EQ(s.ranks[1].samples_per_second, 100.0);
  EXPECT_EQ(s.total_samples, 600);
  EXPECT_DOUBLE_EQ(s.slowest_rank_seconds, 3.0);
  EXPECT_DOUBLE_EQ(s.total_samples_per_second, 200.0);
  EXPECT_EQ(stats_to_json(s)["total"]["samples_per_second"], 200.0);
  EXPECT_TRUE(stats_to_json(s)["ranks"][0]["comm_share"].is_null());
}

// A restarted job's files hold both attempts' records: attempt 0 did steps 0-4 and crashed, attempt
// 1 resumed at step 3 (its checkpoint) and did 3-5. Steps 3 and 4 count once, from attempt 1; the
// two records of attempt 0 it redid are left out and counted. Records of one attempt that repeat a
// step number (a program that records every step as 0) are all counted, as before.
TEST(Stats, StepsRedoneAfterARestartAreCountedOnce) {
  StatsBuilder b;
  const auto rec = [](int rank, long long n, int attempt, double seconds) {
    records::MetricRecord r = step(rank, 10, seconds);
    r.step = n;
    r.attempt = attempt;
    r.time = 1795341600.0 + 100 * attempt + static_cast<double>(n);
    return r;
  };
  for (long long n = 0; n <= 4; ++n) b.add(rec(0, n, 0, 1.0));
  for (long long n = 3; n <= 5; ++n) b.add(rec(0, n, 1, 2.0));
  for (int i = 0; i < 3; ++i) b.add(rec(1, 0, 0, 1.0));
  const RunStats s = b.finish();
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_EQ(s.ranks[0].steps, 6);
  EXPECT_EQ(s.ranks[0].samples, 60);
  EXPECT_DOUBLE_EQ(s.ranks[0].seconds, 3 * 1.0 + 3 * 2.0);
  EXPECT_EQ(s.ranks[1].steps, 3);
  EXPECT_EQ(s.lost.redone_step_records, 2);
  // Attempt 1's first step (step 3, 2 s long) ended at +103 s: it began at +101 s.
  ASSERT_EQ(s.first_step_start.count(1), 1u);
  EXPECT_EQ(s.first_step_start.at(1), (1795341600LL + 101) * 1000000);
  EXPECT_EQ(s.first_step_start.at(0), (1795341600LL - 1) * 1000000);
}

TEST(Stats, PercentilesCommShareAndDataTimeEqualIndependentSums) {
  // 200 random steps per rank; every figure is recomputed here from the same numbers.
  std::mt19937 rng(3);
  std::vector<records::MetricRecord> records;
  std::vector<std::vector<double>> rates(3);
  std::vector<double> seconds(3), comm(3), data(3);
  std::vector<long long> samples(3);
  for (int i = 0; i < 200; ++i) {
    for (int r = 0; r < 3; ++r) {
      const long long n = 16 + static_cast<long long>(rng() % 48);
      const double t = 0.05 + static_cast<double>(rng() % 1000) / 10000.0;
      const double c = t * static_cast<double>(rng() % 50) / 100.0;
      const double d = t * static_cast<double>(rng() % 20) / 100.0;
      records.push_back(step(r, n, t, c, d));
      rates[r].push_back(static_cast<double>(n) / t);
      seconds[r] += t;
      comm[r] += c;
      data[r] += d;
      samples[r] += n;
    }
  }
  const RunStats s = compute_stats(records);
  for (int r = 0; r < 3; ++r) {
    std::sort(rates[r].begin(), rates[r].end());
    const auto& rs = s.ranks[r];
    EXPECT_EQ(rs.samples, samples[r]);
    EXPECT_NEAR(rs.seconds, seconds[r], 1e-9);
    EXPECT_NEAR(rs.samples_per_second, static_cast<double>(samples[r]) / seconds[r], 1e-9);
    EXPECT_DOUBLE_EQ(rs.p50_samples_per_second, rates[r][99]);   // nearest rank: ceil(100) - 1
    EXPECT_DOUBLE_EQ(rs.p95_samples_per_second, rates[r][189]);  // ceil(190) - 1
    EXPECT_NEAR(rs.comm_share, comm[r] / seconds[r], 1e-12);
    EXPECT_NEAR(rs.data_seconds, data[r], 1e-9);
  }
}

TEST(Stats, EachNodeMovesAtItsSlowestRanksPace) {
  // Ranks 0, 1 and 3 on n0, rank 2 on n1: n0 did 30 samples in its slowest rank's 3 s.
  StatsBuilder b;
  b.add(step(0, 10, 1.0));
  b.add(step(1, 10, 3.0));
  b.add(step(2, 10, 2.0));
  b.add(step(3, 10, 1.0));
  for (int r : {0, 1, 3}) b.set_host(r, "n0");
  b.set_host(2, "n1");
  const RunStats s = b.finish(0.10);
  ASSERT_EQ(s.nodes.size(), 2u);
  EXPECT_EQ(s.nodes[0].host, "n0");
  EXPECT_EQ(s.nodes[0].ranks, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(s.nodes[0].samples, 30);
  EXPECT_DOUBLE_EQ(s.nodes[0].samples_per_second, 10.0);
  EXPECT_DOUBLE_EQ(s.nodes[1].samples_per_second, 5.0);
  const std::string table = format_stats_table(s);
  EXPECT_NE(table.find("node                  ranks      samples    seconds   samples/s\n"
                       "n0                    0-1,3           30      3.000          10\n"
                       "n1                        2           10      2.000           5\n"),
            std::string::npos)
      << table;
  const nlohmann::json j = stats_to_json(s);
  EXPECT_EQ(j["nodes"][1]["host"], "n1");
  EXPECT_EQ(j["nodes"][0]["ranks"], nlohmann::json::array({0, 1, 3}));

  // One host (or hosts unknown): no node section.
  StatsBuilder one;
  one.add(step(0, 10, 1.0));
  one.add(step(1, 10, 1.0));
  EXPECT_TRUE(one.finish(0.10).nodes.empty());
  EXPECT_EQ(format_stats_table(one.finish(0.10)).find("node "), std::string::npos);
}

TEST(Stats, AStragglerRankIsNamedWithItsCause) {
  // Synchronous steps: every rank's step takes 1 s; rank 2 computes for 0.9 s while the others
  // compute for 0.5 s and wait 0.4 s for it. Rank 3 spends its extra time loading data.
  std::vector<records::MetricRecord> records;
  for (int i = 0; i < 10; ++i) {
    records.push_back(step(0, 10, 1.0, 0.5, 0.0));
    records.push_back(step(1, 10, 1.0, 0.5, 0.0));
    records.push_back(step(2, 10, 1.0, 0.1, 0.0));
    records.push_back(step(3, 10, 1.0, 0.1, 0.4));
    records.push_back(step(4, 10, 1.0, 0.5, 0.0));
  }
  StatsBuilder b;
  for (const auto& r : records) b.add(r);
  for (int r = 0; r < 5; ++r) b.set_host(r, r < 3 ? "n0" : "n1");
  const RunStats s = b.finish(0.10);
  ASSERT_GE(s.stragglers.size(), 2u);
  EXPECT_EQ(s.stragglers[0].kind, "rank");
  EXPECT_EQ(s.stragglers[0].rank, 2);
  EXPECT_EQ(s.stragglers[0].cause, "compute");
  EXPECT_NEAR(s.stragglers[0].slower_by, 0.8, 1e-9);  // busy 0.9 s vs median 0.5 s
  EXPECT_EQ(s.stragglers[1].rank, 3);
  EXPECT_EQ(s.stragglers[1].cause, "data loading");
  const std::string table = format_stats_table(s);
  EXPECT_NE(
      table.find("rank 2 on n0: 80 % slower; cause: compute (90 ms per sample, median 50 ms)"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("comm %"), std::string::npos);
}

}  // namespace
}  // namespace dtrain::report
