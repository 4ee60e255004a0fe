// `dtrain timeline`: metric records become Chrome trace events on one time axis.
#include "report/trace.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "heartbeats.hpp"
#include "records/metric_record.hpp"

namespace dtrain::report {
namespace {

using testing::coll;

TEST(Trace, StepsAndCollectivesBecomeCompleteEventsOnOneAxis) {
  std::string out;
  TraceWriter w([&](std::string_view s) { out.append(s); });
  w.add_rank(0, "node0");
  records::MetricRecord step;
  step.version = 2;
  step.rank = 0;
  step.step = 7;
  step.samples = 32;
  step.seconds = 0.25;
  step.comm_seconds = 0.05;
  step.time = 1795341601.0;
  w.add(step);
  w.add(coll(0, 0, true, 0.9));
  w.add(coll(0, 0, false, 0.95));
  w.add(coll(0, 1, true, 1.5));  // never left
  w.finish();
  const auto j = nlohmann::json::parse(out);
  const auto& ev = j["traceEvents"];
  ASSERT_EQ(ev.size(), 7u);  // 4 metadata, step, collective, open collective
  EXPECT_EQ(ev[4]["name"], "step 7");
  EXPECT_EQ(ev[4]["ph"], "X");
  EXPECT_EQ(ev[4]["ts"], 1795341600750000LL);
  EXPECT_EQ(ev[4]["dur"], 250000);
  EXPECT_EQ(ev[4]["args"]["comm_seconds"], 0.05);
  EXPECT_EQ(ev[5]["name"], "allreduce");
  EXPECT_EQ(ev[5]["tid"], 1);
  EXPECT_EQ(ev[5]["dur"], 50000);
  EXPECT_EQ(ev[6]["name"], "allreduce (never left)");
  EXPECT_EQ(ev[6]["args"]["never_left"], true);
}

// Resource samples are counters of the rank's process: the CPU share from the start of its
// interval, the readings at the sample's time; no GPU counter without a GPU.
TEST(Trace, ResourceSamplesBecomeCounters) {
  std::string out;
  TraceWriter w([&](std::string_view s) { out.append(s); });
  w.add_rank(1, "node0");
  w.add(testing::resource(1, 10.0, 5.0, 150.0, 512LL << 20));
  w.add(testing::resource(1, 15.0, 5.0, 50.0, 256LL << 20,
                          records::GpuSample{3, 90.0, 1LL << 30, {}}));
  w.finish();
  const auto j = nlohmann::json::parse(out);
  const auto& ev = j["traceEvents"];
  ASSERT_EQ(ev.size(), 4u + 2 + 4);  // metadata; cpu, rss; cpu, rss, gpu %, gpu MiB (no power)
  EXPECT_EQ(ev[4]["name"], "cpu %");
  EXPECT_EQ(ev[4]["ph"], "C");
  EXPECT_EQ(ev[4]["pid"], 1);
  EXPECT_EQ(ev[4]["ts"], 1795341605000000LL);
  EXPECT_EQ(ev[4]["args"]["value"], 150.0);
  EXPECT_EQ(ev[5]["name"], "rss MiB");
  EXPECT_EQ(ev[5]["ts"], 1795341610000000LL);
  EXPECT_EQ(ev[5]["args"]["value"], 512.0);
  EXPECT_EQ(ev[8]["name"], "gpu %");
  EXPECT_EQ(ev[8]["args"]["value"], 90.0);
  EXPECT_EQ(ev[9]["name"], "gpu MiB");
  EXPECT_EQ(ev[9]["args"]["value"], 1024.0);
}

}  // namespace
}  // namespace dtrain::report

namespace dtrain::report {
namespace {

TEST(Trace, AnIntervalRecordIsOneSliceFromItsFirstStepsStart) {
  std::string out;
  TraceWriter w([&](std::string_view s) { out.append(s); });
  w.add_rank(0, "node0");
  records::IntervalAccumulator acc(records::IntervalPolicy{100, 0, 60, 0, 4, 2});
  acc.add({20, 32, 0.25, 0.05, std::nullopt, 1795341601.0});
  acc.add({21, 32, 0.25, 0.05, std::nullopt, 1795341601.5});
  records::MetricRecord r;
  r.version = 2;
  r.type = records::RecordType::kInterval;
  r.time = 1795341601.5;
  r.step_interval = *acc.take();
  w.add(r);
  w.finish();
  const auto ev = nlohmann::json::parse(out)["traceEvents"];
  ASSERT_EQ(ev.size(), 5u);  // 4 metadata, the interval
  EXPECT_EQ(ev[4]["name"], "steps 20-21");
  EXPECT_EQ(ev[4]["ts"], 1795341600750000LL);
  EXPECT_EQ(ev[4]["dur"], 750000);
  EXPECT_EQ(ev[4]["args"]["steps"], 2);
  EXPECT_EQ(ev[4]["args"]["samples"], 64.0);
  EXPECT_EQ(ev[4]["args"]["comm_seconds"], 0.1);
}

}  // namespace
}  // namespace dtrain::report
