// `dtrain stats` of the same synthetic job written at full detail (a record per step) and at the
// default (interval records, records/step_interval.hpp): every figure within 1 %, the same
// stragglers with the same cause.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "records/step_interval.hpp"
#include "report/stats.hpp"

namespace dtrain::report {
namespace {

struct Job {
  std::vector<records::MetricRecord> full;       // DTRAIN_RECORDS=steps
  std::vector<records::MetricRecord> intervals;  // the default
};

// 4 ranks x 3,000 steps of about 50 ms; rank 2 computes 30 % longer and the others wait for it in
// the allreduce; every 500th step is a slow one (a checkpoint); data loading on every step.
Job synthetic_job() {
  Job job;
  std::mt19937 random(2026);
  std::lognormal_distribution<double> noise(0, 0.05);
  for (int rank = 0; rank < 4; ++rank) {
    records::IntervalAccumulator acc;
    double t = 1795367880;
    const auto push_interval = [&](const std::optional<records::StepInterval>& i) {
      if (!i) return;
      records::MetricRecord r;
      r.version = 2;
      r.type = records::RecordType::kInterval;
      r.rank = rank;
      r.time = t;
      r.step_interval = *i;
      job.intervals.push_back(r);
    };
    for (long long step = 0; step < 3000; ++step) {
      const double compute = 0.04 * noise(random) * (rank == 2 ? 1.3 : 1.0);
      const double data = 0.004 * noise(random);
      const double comm = rank == 2 ? 0.001 * noise(random) : 0.013 * noise(random);
      const double seconds = compute + data + comm + (step % 500 == 499 ? 1.0 : 0.0);
      t += seconds + 0.0005;
      records::MetricRecord r;
      r.version = 2;
      r.rank = rank;
      r.time = t;
      r.step = step;
      r.samples = 64;
      r.seconds = seconds;
      r.comm_seconds = comm;
      r.data_seconds = data;
      job.full.push_back(r);
      const auto added = acc.add({step, 64, seconds, comm, data, t});
      push_interval(added.closed);
      if (added.full) job.intervals.push_back(r);
      push_interval(acc.take_due(t));
    }
    push_interval(acc.take());
  }
  return job;
}

void expect_within_1_percent(const nlohmann::json& full, const nlohmann::json& agg,
                             const std::string& where) {
  if (full.is_number()) {
    const double a = full.get<double>(), b = agg.get<double>();
    EXPECT_NEAR(b, a, 0.01 * std::abs(a)) << where;
  } else if (full.is_object()) {
    for (const auto& [key, value] : full.items()) {
      expect_within_1_percent(value, agg.at(key), where + "." + key);
    }
  } else if (full.is_array()) {
    ASSERT_EQ(full.size(), agg.size()) << where;
    for (std::size_t i = 0; i < full.size(); ++i) {
      expect_within_1_percent(full[i], agg[i], where + "[" + std::to_string(i) + "]");
    }
  } else {
    EXPECT_EQ(full, agg) << where;
  }
}

TEST(StatsOfIntervals, EveryFigureWithinOnePercentOfTheFullDetail) {
  const Job job = synthetic_job();
  // The default writes a small part of the records.
  EXPECT_EQ(job.full.size(), 12000u);
  EXPECT_LT(job.intervals.size(), 12000u / 20);
  const nlohmann::json full = stats_to_json(compute_stats(job.full));
  const nlohmann::json agg = stats_to_json(compute_stats(job.intervals));
  expect_within_1_percent(full, agg, "stats");
  // What the comparison covered: rank 2 is the straggler, by its compute, in both.
  ASSERT_EQ(full["stragglers"].size(), 1u);
  EXPECT_EQ(agg["stragglers"][0]["rank"], 2);
  EXPECT_EQ(agg["stragglers"][0]["cause"], "compute");
  EXPECT_EQ(agg["ranks"][0]["steps"], 3000);
  EXPECT_GT(full["ranks"][0]["p95_step_seconds"].get<double>(), 0.05);
}

TEST(StatsOfIntervals, ARestartDropsTheIntervalsFromTheResumedStepOn) {
  // Attempt 0 wrote steps 0-19 whole and the interval 20-119; attempt 1 resumed at step 100:
  // the interval began before it and stays whole (the readers cannot split it).
  records::MetricRecord a;
  a.version = 2;
  a.type = records::RecordType::kInterval;
  records::IntervalAccumulator acc(records::IntervalPolicy{1000, 0, 1e9, 0, 4, 2});
  for (long long s = 20; s < 120; ++s)
    acc.add({s, 8, 0.1, 0, std::nullopt, 100.0 + static_cast<double>(s)});
  a.step_interval = *acc.take();
  a.time = 220;
  records::IntervalAccumulator later(records::IntervalPolicy{1000, 0, 1e9, 0, 4, 2});
  for (long long s = 120; s < 150; ++s)
    later.add({s, 8, 0.1, 0, std::nullopt, 300.0 + static_cast<double>(s)});
  records::MetricRecord b = a;
  b.step_interval = *later.take();
  records::MetricRecord resumed = a;
  resumed.type = records::RecordType::kStep;
  resumed.attempt = 1;
  resumed.step = 120;
  resumed.samples = 8;
  resumed.seconds = 0.1;
  resumed.comm_seconds = 0;
  resumed.time = 500;
  const RunStats s = compute_stats({a, b, resumed});
  EXPECT_EQ(s.ranks[0].steps, 101);  // 20-119, then 120 again (120-149 of attempt 0 redone)
  EXPECT_EQ(s.lost.redone_step_records, 30);
}

}  // namespace
}  // namespace dtrain::report
