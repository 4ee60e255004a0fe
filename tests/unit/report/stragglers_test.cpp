// The straggler verdict as `dtrain stats` prints it, at 2, 3, 8 and 1,024 ranks: each rank is
// compared with the median of the others, a floor per step keeps microsecond noise out, and the
// line says in how many of the last steps the rank was the slowest.
#include "report/stragglers.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "report/stats.hpp"

namespace dtrain::report {
namespace {

// One synchronous step of a rank: it computes for `busy` seconds, then waits in the allreduce
// until the slowest rank arrives, so every rank's step lasts `step_seconds`.
records::MetricRecord step(int rank, long long n, long long samples, double step_seconds,
                           double busy) {
  records::MetricRecord r;
  r.version = 2;
  r.rank = rank;
  r.step = n;
  r.samples = samples;
  r.seconds = step_seconds;
  r.comm_seconds = step_seconds - busy;
  r.data_seconds = 0.0;
  return r;
}

std::string stragglers_of(const RunStats& s) {
  const std::string table = format_stats_table(s);
  const auto at = table.find("stragglers (");
  return at == std::string::npos ? "" : table.substr(at);
}

// 2 ranks, rank 1 computes 1.9x as long as rank 0: compared with the median of both (their mean),
// it read "30 % slower"; compared with the other rank it is 90 % slower.
TEST(Stragglers, AtTwoRanksTheSlowRankIsComparedWithTheOther) {
  StatsBuilder b;
  for (int n = 0; n < 20; ++n) {
    b.add(step(0, n, 10, 0.19, 0.10));
    b.add(step(1, n, 10, 0.19, 0.19));
  }
  b.set_host(0, "n0");
  b.set_host(1, "n1");
  const RunStats s = b.finish();
  ASSERT_EQ(s.stragglers.size(), 1u) << stragglers_of(s);
  EXPECT_EQ(s.stragglers[0].rank, 1);
  EXPECT_NEAR(s.stragglers[0].slower_by, 0.9, 1e-9);
  EXPECT_EQ(stragglers_of(s),
            "stragglers (more than 10 % and 500 us a step slower than the median of the others):\n"
            "  rank 1 on n1: 90 % slower (90 ms a step); cause: compute (19 ms per sample, others "
            "10 ms); the slowest rank in 20 of the last 20 steps\n");
  const nlohmann::json j = stats_to_json(s);
  EXPECT_EQ(j["stragglers"][0]["slowest_steps"], 20);
  EXPECT_EQ(j["stragglers"][0]["steps_compared"], 20);
  EXPECT_NEAR(j["stragglers"][0]["excess_seconds_per_step"].get<double>(), 0.09, 1e-12);
  EXPECT_EQ(j["straggler_min_excess_seconds"], 0.0005);
}

// A C++ loop of microsecond steps: rank 0 is busier (8 us against 6 us), rank 1's steps are longer
// (14 us against 10 us). Against the median of both, each was over it by more than 10 % and both
// were named; a few microseconds a step are below the floor, so neither is.
TEST(Stragglers, MicrosecondNoiseOnBothRanksNamesNoStraggler) {
  const auto run = [](double scale) {
    StatsBuilder b;
    for (int n = 0; n < 1000; ++n) {
      b.add(step(0, n, 1, 10e-6 * scale, 8e-6 * scale));
      b.add(step(1, n, 1, 14e-6 * scale, 6e-6 * scale));
    }
    return b.finish();
  };
  const RunStats micro = run(1);
  EXPECT_TRUE(micro.stragglers.empty()) << stragglers_of(micro);
  EXPECT_EQ(stragglers_of(micro), "");
  // The same differences in milliseconds are past the floor: the test can name them.
  EXPECT_EQ(run(1000).stragglers.size(), 2u);
}

// 3 ranks: rank 2 at 1.5x is named, the two others are not.
TEST(Stragglers, AtThreeRanksOnlyTheSlowRankIsNamed) {
  StatsBuilder b;
  for (int n = 0; n < 50; ++n) {
    b.add(step(0, n, 8, 0.06, 0.040));
    b.add(step(1, n, 8, 0.06, 0.041));
    b.add(step(2, n, 8, 0.06, 0.060));
  }
  const RunStats s = b.finish();
  ASSERT_EQ(s.stragglers.size(), 1u) << stragglers_of(s);
  EXPECT_EQ(s.stragglers[0].rank, 2);
  EXPECT_NE(stragglers_of(s).find("  rank 2 on ?: 48 % slower (19.5 ms a step); cause: compute "
                                  "(7.5 ms per sample, others 5.06 ms); the slowest rank in 50 of "
                                  "the last 50 steps\n"),
            std::string::npos)
      << stragglers_of(s);
}

// Ranks whose busy time varies from step to step around 10 ms by up to `noise`, each with a mean
// of exactly 10 ms (a step over it is followed by one as far under it); `slow` computes 1.25x.
RunStats noisy_run(int ranks, int steps, int slow, double noise, int ranks_per_host) {
  std::mt19937 gen(46);
  std::uniform_real_distribution<double> spread(0, noise);
  StatsBuilder b;
  std::vector<double> delta(static_cast<std::size_t>(ranks));
  for (int n = 0; n < steps; ++n) {
    for (int r = 0; r < ranks; ++r) {
      auto& d = delta[static_cast<std::size_t>(r)];
      if (n % 2 == 0) d = spread(gen);
      const double busy = r == slow ? 0.0125 : 0.010 * (1 + (n % 2 == 0 ? d : -d));
      b.add(step(r, n, 10, 0.013, busy));
    }
  }
  for (int r = 0; r < ranks; ++r) b.set_host(r, "n" + std::to_string(r / ranks_per_host));
  return b.finish();
}

// 8 ranks on 2 nodes with 5 % noise: rank 5 at 1.25x is named, and neither node (its node is only
// 6 % slower per sample: one slow rank of four).
TEST(Stragglers, AtEightRanksOneSlowRankIsNamedAlone) {
  const RunStats s = noisy_run(8, 100, 5, 0.05, 4);
  ASSERT_EQ(s.stragglers.size(), 1u) << stragglers_of(s);
  EXPECT_EQ(s.stragglers[0].rank, 5);
  EXPECT_EQ(stragglers_of(s),
            "stragglers (more than 10 % and 500 us a step slower than the median of the others):\n"
            "  rank 5 on n1: 25 % slower (2.5 ms a step); cause: compute (1.25 ms per sample, "
            "others 1 ms); the slowest rank in 100 of the last 100 steps\n");
}

// 1,024 ranks on 256 hosts, 5 % noise, 250 steps: one rank at 1.25x is named alone, slowest in
// each of the last 200 steps (the verdict counts that many).
TEST(Stragglers, AtOneThousandTwentyFourRanksOneSlowRankIsNamedAlone) {
  const RunStats s = noisy_run(1024, 250, 777, 0.05, 4);
  ASSERT_EQ(s.stragglers.size(), 1u) << stragglers_of(s);
  EXPECT_EQ(s.stragglers[0].rank, 777);
  EXPECT_EQ(stragglers_of(s),
            "stragglers (more than 10 % and 500 us a step slower than the median of the others):\n"
            "  rank 777 on n194: 25 % slower (2.5 ms a step); cause: compute (1.25 ms per sample, "
            "others 1 ms); the slowest rank in 200 of the last 200 steps\n");
}

// No rank stands out: 1,024 ranks with 5 % noise name nobody.
TEST(Stragglers, NoiseAloneNamesNobodyAtOneThousandTwentyFourRanks) {
  EXPECT_TRUE(noisy_run(1024, 50, -1, 0.05, 4).stragglers.empty());
}

TEST(Stragglers, SlowestCountsMatchStepsFromTheEndAndCountTies) {
  // Rank 2 recorded one step less: its last is matched with the others' last. From the end: rank 1
  // (3), all three tied (5), rank 0 (1 against 0; rank 2 recorded nothing).
  const std::vector<std::vector<double>> busy = {{1, 5, 1}, {0, 5, 3}, {5, 2}};
  const auto by_rank = count_slowest(busy, {0, 1, 2}, 3);
  EXPECT_EQ(by_rank[0].slowest, 2);
  EXPECT_EQ(by_rank[0].compared, 3);
  EXPECT_EQ(by_rank[1].slowest, 2);
  EXPECT_EQ(by_rank[1].compared, 3);
  EXPECT_EQ(by_rank[2].slowest, 1);
  EXPECT_EQ(by_rank[2].compared, 2);
  // Nodes: ranks 0 and 1 on one, rank 2 on the other. The first step, which one node alone
  // recorded, compares nothing.
  const auto by_node = count_slowest(busy, {0, 0, 1}, 2);
  EXPECT_EQ(by_node[0].slowest, 2);
  EXPECT_EQ(by_node[0].compared, 2);
  EXPECT_EQ(by_node[1].slowest, 1);
  EXPECT_EQ(by_node[1].compared, 2);
}

TEST(Stragglers, CertaintyIsSaidOnlyWhenStepsWereCompared) {
  Straggler s;
  s.kind = "node";
  EXPECT_EQ(certainty_text(s), "");
  s.slowest_steps = 1;
  s.steps_compared = 1;
  EXPECT_EQ(certainty_text(s), "the slowest node in 1 of the last 1 step");
}

}  // namespace
}  // namespace dtrain::report
