// `dtrain timeline`: metric records become Chrome trace events on one time axis.
#include "report/trace.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

records::MetricRecord step_at(int rank, long long n, double end) {
  records::MetricRecord r;
  r.version = 2;
  r.rank = rank;
  r.step = n;
  r.samples = 32;
  r.seconds = 0.5;
  r.comm_seconds = 0.0;
  r.time = end;
  return r;
}

// What a bounded trace holds: each rank's names, its last events (the earliest give way), the
// exit markers, and the count of what was left out.
TEST(Trace, EachRankKeepsItsLastEventsWithinTheLimit) {
  std::string out;
  TraceLimits limits;
  limits.per_rank = 3;
  TraceWriter w([&](std::string_view s) { out.append(s); }, limits);
  w.add_rank(0, "node0");
  w.add_rank(1, "node0");
  for (int rank : {0, 1}) {
    for (int n = 0; n < 10; ++n) w.add(step_at(rank, n, 1795341601.0 + n));
    w.add(coll(rank, 10, true, 11.2));
    w.add(coll(rank, 10, false, 11.4));
  }
  w.add_instant(1, 1795341612000000LL, "rank exited 0");
  w.finish();
  const auto trace = nlohmann::json::parse(out);
  std::vector<std::string> kept;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "M")
      kept.push_back(std::to_string(e["pid"].get<int>()) + " " + e["name"].get<std::string>());
  }
  EXPECT_EQ(kept, (std::vector<std::string>{"0 step 8", "0 step 9", "0 allreduce", "1 step 8",
                                            "1 step 9", "1 allreduce", "1 rank exited 0"}));
  EXPECT_EQ(w.left_out(), 16);
  EXPECT_EQ(w.outside_window(), 0);
}

// A window keeps the events that overlap it, a step crossing its edge whole.
TEST(Trace, AWindowKeepsWhatOverlapsIt) {
  std::string out;
  TraceLimits limits;
  // Step n runs from 1795341600.5 + n to 1795341601 + n: the window begins inside step 3 and
  // ends where step 5 ends.
  limits.since = 1795341603800000LL;
  limits.until = 1795341606000000LL;
  TraceWriter w([&](std::string_view s) { out.append(s); }, limits);
  w.add_rank(0, "node0");
  for (int n = 0; n < 10; ++n) w.add(step_at(0, n, 1795341601.0 + n));
  w.add(coll(0, 1, true, 5.9));  // never left, entered inside the window: kept
  w.add(coll(0, 2, true, 8.5));  // never left, entered after it: left out
  w.finish();
  const auto trace = nlohmann::json::parse(out);
  std::vector<std::string> kept;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") kept.push_back(e["name"]);
  }
  EXPECT_EQ(kept,
            (std::vector<std::string>{"step 3", "step 4", "step 5", "allreduce (never left)"}));
  EXPECT_EQ(w.outside_window(), 8);
  EXPECT_EQ(w.left_out(), 0);
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
