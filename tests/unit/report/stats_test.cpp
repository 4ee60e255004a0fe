#include "report/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "heartbeats.hpp"

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
  std::vector<std::vector<double>> step_seconds(3);
  std::vector<double> seconds(3), comm(3), data(3);
  std::vector<long long> samples(3);
  for (int i = 0; i < 200; ++i) {
    for (int r = 0; r < 3; ++r) {
      const long long n = 16 + static_cast<long long>(rng() % 48);
      const double t = 0.05 + static_cast<double>(rng() % 1000) / 10000.0;
      const double c = t * static_cast<double>(rng() % 50) / 100.0;
      const double d = t * static_cast<double>(rng() % 20) / 100.0;
      records.push_back(step(r, n, t, c, d));
      step_seconds[r].push_back(t);
      seconds[r] += t;
      comm[r] += c;
      data[r] += d;
      samples[r] += n;
    }
  }
  const RunStats s = compute_stats(records);
  for (int r = 0; r < 3; ++r) {
    std::sort(step_seconds[r].begin(), step_seconds[r].end());
    const auto& rs = s.ranks[r];
    EXPECT_EQ(rs.samples, samples[r]);
    EXPECT_NEAR(rs.seconds, seconds[r], 1e-9);
    EXPECT_NEAR(rs.samples_per_second, static_cast<double>(samples[r]) / seconds[r], 1e-9);
    EXPECT_DOUBLE_EQ(rs.p50_step_seconds, step_seconds[r][99]);   // nearest rank: ceil(100) - 1
    EXPECT_DOUBLE_EQ(rs.p95_step_seconds, step_seconds[r][189]);  // ceil(190) - 1
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
  EXPECT_NEAR(s.stragglers[0].slower_by, 0.8, 1e-9);  // busy 0.9 s vs the others' median 0.5 s
  EXPECT_EQ(s.stragglers[1].rank, 3);
  EXPECT_EQ(s.stragglers[1].cause, "data loading");
  const std::string table = format_stats_table(s);
  EXPECT_NE(
      table.find("rank 2 on n0: 80 % slower (400 ms a step); cause: compute (90 ms per sample, "
                 "others 50 ms); the slowest rank in 10 of the last 10 steps\n"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("comm %"), std::string::npos);
}

// What a user reads: rates as plain numbers whatever their size (the table mixed `8300`,
// `1.009e+04` and `5.62e+04`), and p50/p95 of the step time, so that p95 is the slow tail: 19 steps
// of 10 ms and one of 200 ms put 10 ms at p50 and p95 and the 200 ms step nowhere before; here
// 18 of 10 ms and 2 of 200 ms make p95 200 ms (the rate percentiles said 1000 and 1000 samples/s).
TEST(Stats, TheTableShowsPlainNumbersAndTheSlowTailOfStepTime) {
  StatsBuilder b;
  for (int i = 0; i < 20; ++i) {
    b.add(step(0, 83, 0.01));  // 8300 samples/s
    b.add(step(1, 10093, 1.0));
    b.add(step(2, 562, 0.01));  // 56200 samples/s
    b.add(step(3, 10, i < 18 ? 0.01 : 0.2));
  }
  const RunStats s = b.finish();
  EXPECT_DOUBLE_EQ(s.ranks[3].p50_step_seconds, 0.01);
  EXPECT_DOUBLE_EQ(s.ranks[3].p95_step_seconds, 0.2);
  const std::string table = format_stats_table(s);
  // The rows (rank 3 is a straggler: its lines follow).
  EXPECT_EQ(table.find("  rank host           steps      samples    seconds   samples/s      p50 "
                       "ms      p95 ms\n"
                       "     0 ?                 20         1660      0.200        8300          "
                       "10          10\n"
                       "     1 ?                 20       201860     20.000       10093        "
                       "1000        1000\n"
                       "     2 ?                 20        11240      0.200       56200          "
                       "10          10\n"
                       "     3 ?                 20          200      0.580         345          "
                       "10         200\n"
                       " total                            214960     20.000       10748\n"),
            0u)
      << table;
  EXPECT_EQ(table.find("e+"), std::string::npos);
  const nlohmann::json j = stats_to_json(s);
  EXPECT_DOUBLE_EQ(j["ranks"][3]["p95_step_seconds"].get<double>(), 0.2);
  EXPECT_FALSE(j["ranks"][3].contains("p95_samples_per_second"));
}

// comm_seconds above the step's seconds (libdtrain until 2026-11-28 charged collectives run
// between steps to the next step: a C++ loop showed comm % = 518.4) counts as the whole step, never
// more; and the table says what comm % cannot see.
TEST(Stats, CommShareNeverPassesTheStepAndTheTableSaysWhatItDoesNotSee) {
  StatsBuilder b;
  for (int i = 0; i < 10; ++i) {
    b.add(step(0, 10, 0.1, 0.5184));
    b.add(step(1, 10, 0.1, 0.02));
  }
  const RunStats s = b.finish();
  EXPECT_DOUBLE_EQ(s.ranks[0].comm_share, 1.0);
  EXPECT_NEAR(s.ranks[1].comm_share, 0.2, 1e-12);
  const std::string table = format_stats_table(s);
  EXPECT_NE(table.find("    100.0\n"), std::string::npos) << table;
  EXPECT_EQ(table.find("518"), std::string::npos) << table;
  EXPECT_NE(
      table.find("note: comm % is the time inside dtrain's own collectives during the timed "
                 "steps (torch.distributed's and DDP's on backend dtrain among them); another "
                 "library's collectives (torch.distributed on gloo or NCCL, Horovod, NCCL "
                 "called directly) are not seen and count as compute, here and in the "
                 "stragglers' causes\n"),
      std::string::npos)
      << table;
  EXPECT_EQ(table.find("no dtrain collective ran"), std::string::npos) << table;
  EXPECT_EQ(stats_to_json(s)["notes"].size(), 1u);
}

// A DDP job: its allreduce goes through torch.distributed, so no rank saw a dtrain collective in
// a step. The table says so instead of showing 0.0 % as if the job did not communicate.
TEST(Stats, NoCollectiveSeenInAnyStepIsSaid) {
  StatsBuilder b;
  for (int i = 0; i < 10; ++i) {
    b.add(step(0, 10, 0.1, 0.0));
    b.add(step(1, 10, 0.1, 0.0));
  }
  const RunStats s = b.finish();
  const std::string table = format_stats_table(s);
  EXPECT_NE(table.find("note: no dtrain collective ran inside a timed step on any rank: the "
                       "gradients, if exchanged, went through another library, whose time is not "
                       "in comm %\n"),
            std::string::npos)
      << table;
  const nlohmann::json j = stats_to_json(s);
  ASSERT_EQ(j["notes"].size(), 2u);
  EXPECT_EQ(j["notes"][1].get<std::string>().rfind("no dtrain collective ran", 0), 0u);
  // Records without comm_seconds (schema 1): no comm column, nothing to say about it.
  StatsBuilder v1;
  v1.add(step(0, 10, 0.1));
  v1.add(step(1, 10, 0.1));
  EXPECT_TRUE(v1.finish().notes.empty());
}

// The restart: attempt 0 did steps 0-39 and crashed after the checkpoint of step 19;
// attempt 1 redid 20-39. Numbered on from the checkpoint (Meter::next_step()), 20 records count as
// redone; numbered from 0 again, all 40 did, and the table says why the count looks wrong.
TEST(Stats, AnAttemptThatNumberedItsStepsFromTheStartAgainIsNamed) {
  const auto run = [](long long resumed_at) {
    StatsBuilder b;
    for (long long n = 0; n < 40; ++n) {
      records::MetricRecord r = step(0, 10, 0.1, 0.0);
      r.step = n;
      b.add(r);
    }
    for (long long n = resumed_at; n < resumed_at + 20; ++n) {
      records::MetricRecord r = step(0, 10, 0.1, 0.0);
      r.step = n;
      r.attempt = 1;
      b.add(r);
    }
    return b.finish();
  };
  const RunStats continued = run(20);
  EXPECT_EQ(continued.lost.redone_step_records, 20);
  EXPECT_EQ(continued.ranks[0].steps, 40);
  EXPECT_EQ(format_stats_table(continued).find("began at step"), std::string::npos);
  const RunStats renumbered = run(0);
  EXPECT_EQ(renumbered.lost.redone_step_records, 40);
  const std::string table = format_stats_table(renumbered);
  EXPECT_NE(table.find("note: attempt 1 began at step 0, no later than the attempt before it: all "
                       "of that attempt's steps count as redone; if it resumed from a checkpoint, "
                       "its steps were numbered from the start again (number them on from the "
                       "checkpoint: Meter.step() without step= after load_latest(), "
                       "docs/metrics.md)\n"),
            std::string::npos)
      << table;
}

// `dtrain stats` averages each rank's resource samples: the CPU share weighted by interval (CPU
// time over time sampled), the readings by count; GPU columns only when a rank has a GPU, "-" for
// a reading a rank lacks; the step table is unchanged by them.
TEST(Stats, ResourceSamplesAreAveragedPerRank) {
  using testing::resource;
  const records::GpuSample gpu{1, 80.0, 2LL << 30, 200.0};
  records::GpuSample no_power = gpu;
  no_power.util_percent = 60.0;
  no_power.power_watts.reset();
  std::vector<records::MetricRecord> records = {
      step(0, 100, 1.0), step(1, 100, 1.0),
      // rank 0: 100 % for 3 s, then 200 % for 1 s (the closing sample): 125 % on average.
      resource(0, 3, 3.0, 100.0, 100LL << 20, gpu),
      resource(0, 4, 1.0, 200.0, 300LL << 20, no_power),
      // rank 1 has no GPU; rank 2 has samples and no step.
      resource(1, 5, 5.0, 50.0, 64LL << 20), resource(2, 5, 5.0, 10.0, 32LL << 20)};
  const RunStats s = compute_stats(records);
  ASSERT_EQ(s.ranks.size(), 2u) << "the step table: ranks with step records only";
  ASSERT_EQ(s.resources.size(), 3u);
  EXPECT_EQ(s.resources[0].records, 2);
  EXPECT_DOUBLE_EQ(s.resources[0].cpu_percent, 125.0);
  EXPECT_DOUBLE_EQ(s.resources[0].rss_bytes, 200.0 * (1 << 20));
  EXPECT_EQ(s.resources[0].gpu, 1);
  EXPECT_DOUBLE_EQ(*s.resources[0].gpu_util_percent, 70.0);
  EXPECT_DOUBLE_EQ(*s.resources[0].gpu_memory_bytes, 2.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(*s.resources[0].gpu_power_watts, 200.0) << "from the sample that has it";
  EXPECT_FALSE(s.resources[1].gpu);
  EXPECT_FALSE(s.resources[1].gpu_util_percent);
  const std::string table = format_stats_table(s);
  EXPECT_NE(
      table.find(
          "resources (averages of each rank's resource records):\n"
          "  rank host         records    cpu %    rss MiB   gpu   gpu %    gpu MiB   gpu W\n"
          "     0 ?                  2      125        200     1      70       2048     200\n"
          "     1 ?                  1       50         64     -       -          -       -\n"
          "     2 ?                  1       10         32     -       -          -       -\n"),
      std::string::npos)
      << table;
  const auto j = stats_to_json(s);
  EXPECT_EQ(j["resources"][0]["cpu_percent"], 125.0);
  EXPECT_EQ(j["resources"][0]["gpu"], 1);
  EXPECT_TRUE(j["resources"][1]["gpu"].is_null());
  EXPECT_TRUE(j["resources"][1]["gpu_power_watts"].is_null());
  // Without any GPU: no GPU columns; without resource samples: no table.
  const std::string cpu_only =
      format_stats_table(compute_stats({step(0, 1, 1.0), resource(0, 1, 1.0, 5.0, 1 << 20)}));
  EXPECT_NE(cpu_only.find("  rank host         records    cpu %    rss MiB\n"), std::string::npos)
      << cpu_only;
  EXPECT_EQ(cpu_only.find("gpu"), std::string::npos) << cpu_only;
  EXPECT_EQ(format_stats_table(compute_stats({step(0, 1, 1.0)})).find("resources"),
            std::string::npos);
}

}  // namespace
}  // namespace dtrain::report
