// What StatsBuilder keeps of a rank's steps (report/kept_steps.hpp): bounded whatever the run's
// length, the sums exact, the percentiles within the histogram's 0.5 %, the last steps exact for
// the straggler verdicts, and a restart's redone steps dropped from the exact steps one by one.
#include "report/kept_steps.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "report/stats.hpp"
#include "report/stats_stages.hpp"
#include "report/stragglers.hpp"

namespace dtrain::report {
namespace {

// Step s of a rank: 50 to 149 ms in a repeating pattern, a third of it in collectives (more
// than the step every 7th, as older writers counted), data loading every other step.
KeptSteps step(long long s) {
  const double seconds = 0.05 + 0.001 * static_cast<double>((s * 37) % 100);
  KeptSteps k{s, 32, seconds, seconds / 3, std::nullopt, 1, nullptr};
  if (s % 7 == 0) k.comm_seconds = seconds * 2;
  if (s % 2 == 0) k.data_seconds = 0.004;
  return k;
}

TEST(KeptSteps, FewStepsStayExact) {
  RankSteps kept;
  std::vector<KeptSteps> all;
  for (long long s = 0; s < static_cast<long long>(kFoldEntries); ++s) {
    kept.push(step(s));
    all.push_back(step(s));
  }
  EXPECT_EQ(kept.blocks(), 0u);
  ASSERT_EQ(kept.entries().size(), all.size());
  const RankStats a = rank_stats(0, kept.entries()), b = rank_stats(0, all);
  EXPECT_EQ(a.p50_step_seconds, b.p50_step_seconds);
  EXPECT_EQ(a.p95_step_seconds, b.p95_step_seconds);
}

TEST(KeptSteps, FiftyThousandStepsAreBoundedWithExactSumsAndLastSteps) {
  RankSteps kept;
  std::vector<KeptSteps> all;
  std::size_t most = 0;
  for (long long s = 0; s < 50000; ++s) {
    kept.push(step(s));
    all.push_back(step(s));
    most = std::max(most, kept.entries().size());
  }
  EXPECT_LE(most, kMaxStepBlocks + kFoldEntries + 1);
  EXPECT_LE(kept.blocks(), kMaxStepBlocks);
  const RankStats a = rank_stats(0, kept.entries()), b = rank_stats(0, all);
  EXPECT_EQ(a.steps, 50000);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_NEAR(a.seconds, b.seconds, 1e-9 * b.seconds);
  EXPECT_NEAR(a.comm_seconds, b.comm_seconds, 1e-9 * b.comm_seconds);  // capped step by step
  EXPECT_NEAR(a.data_seconds, b.data_seconds, 1e-9 * b.data_seconds);
  EXPECT_TRUE(a.has_comm && a.has_data);
  EXPECT_NEAR(a.p50_step_seconds, b.p50_step_seconds, 0.005 * b.p50_step_seconds);
  EXPECT_NEAR(a.p95_step_seconds, b.p95_step_seconds, 0.005 * b.p95_step_seconds);
  EXPECT_EQ(last_busy_seconds(kept.entries()), last_busy_seconds(all));
  EXPECT_EQ(last_busy_seconds(all).size(), kStragglerVerdictSteps);
}

TEST(KeptSteps, IntervalRecordsAreBoundedToo) {
  RankSteps kept;
  for (long long first = 0; first < 5000000; first += 100) {
    auto h = std::make_shared<records::LogHistogram>();
    h->add(0.07, 100);
    kept.push({first, 3200, 7.0, 1.0, std::nullopt, 100, h});
  }
  EXPECT_LE(kept.entries().size(), kMaxStepBlocks + static_cast<std::size_t>(kFoldSteps / 100) + 1);
  const RankStats s = rank_stats(0, kept.entries());
  EXPECT_EQ(s.steps, 5000000);
  EXPECT_EQ(s.samples, 50000 * 3200LL);
  EXPECT_NEAR(s.p50_step_seconds, 0.07, 0.005 * 0.07);
}

TEST(KeptSteps, ARestartDropsExactStepsOneByOneAndBlocksWhole) {
  RankSteps kept;
  for (long long s = 0; s < 20000; ++s) kept.push(step(s));
  // Among the exact steps: exactly the steps from 19900 on.
  EXPECT_EQ(kept.drop_from(19900), 100);
  EXPECT_EQ(rank_stats(0, kept.entries()).steps, 19900);
  // Far back, in the blocks: those that began at or after step 5000 go whole; the one that began
  // before it stays whole, as an interval record does.
  const long long dropped = kept.drop_from(5000);
  const auto& e = kept.entries();
  ASSERT_FALSE(e.empty());
  EXPECT_LT(e.back().step, 5000);
  EXPECT_GE(e.back().step + e.back().count, 5000);
  EXPECT_EQ(rank_stats(0, e).steps + dropped, 19900);
  // Pushed again from there, the rank's steps are counted once each.
  const long long from = e.back().step + e.back().count;
  for (long long s = from; s < 20000; ++s) kept.push(step(s));
  EXPECT_EQ(rank_stats(0, kept.entries()).steps, 20000);
}

TEST(KeptSteps, BlockOfSumsCappedCommAndMergesHistograms) {
  const std::vector<KeptSteps> steps = {step(0), step(1), step(7)};
  const KeptSteps b = block_of(steps);
  EXPECT_EQ(b.step, 0);
  EXPECT_EQ(b.count, 3);
  EXPECT_EQ(b.samples, 96);
  ASSERT_TRUE(b.comm_seconds && b.data_seconds && b.histogram);
  // Steps 0 and 7 claim twice their length in collectives: each counts its length.
  EXPECT_DOUBLE_EQ(*b.comm_seconds, steps[0].seconds + steps[1].seconds / 3 + steps[2].seconds);
  EXPECT_DOUBLE_EQ(*b.data_seconds, 0.004);
  EXPECT_EQ(b.histogram->count(), 3);
}

TEST(KeptSteps, AFullDetailRunReadsAsTheSameRunBeforeAndAfterFolding) {
  // Two ranks of 30,000 steps through StatsBuilder: the verdict and the totals are those of the
  // steps kept whole.
  StatsBuilder builder;
  records::MetricRecord r;
  r.type = records::RecordType::kStep;
  for (int rank = 0; rank < 2; ++rank) {
    for (long long s = 0; s < 30000; ++s) {
      const KeptSteps k = step(s);
      r.rank = rank;
      r.step = s;
      r.samples = k.samples;
      r.seconds = k.seconds * (rank == 1 ? 1.5 : 1.0);
      r.comm_seconds = 0.0;
      r.time = 1e9 + static_cast<double>(s);
      builder.add(r);
    }
  }
  const RunStats out = builder.finish();
  ASSERT_EQ(out.ranks.size(), 2u);
  EXPECT_EQ(out.ranks[1].steps, 30000);
  EXPECT_EQ(out.total_samples, 2 * 30000 * 32LL);
  ASSERT_EQ(out.stragglers.size(), 1u);
  EXPECT_EQ(out.stragglers[0].rank, 1);
  EXPECT_EQ(out.stragglers[0].steps_compared, static_cast<long long>(kStragglerVerdictSteps));
}

}  // namespace
}  // namespace dtrain::report
