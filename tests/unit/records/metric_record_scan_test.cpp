// The fast path of the metric record reader: every step and collective record the Meter writes is
// taken by it with the values written, and any other text is left to the general parser (which
// reads it, or names what is wrong), so the readers' figures and messages stay what they were.
#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "records/metric_record.hpp"

namespace dtrain::records {
namespace {

MetricRecord step(double time, int rank, long long n, long long samples, double seconds,
                  double comm, std::optional<double> data, int attempt) {
  MetricRecord r;
  r.version = 2;
  r.time = time;
  r.rank = rank;
  r.step = n;
  r.samples = samples;
  r.seconds = seconds;
  r.comm_seconds = comm;
  r.data_seconds = data;
  r.attempt = attempt;
  return r;
}

void expect_same_step(const MetricRecord& a, const MetricRecord& b) {
  EXPECT_EQ(a.type, RecordType::kStep);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.seconds, b.seconds);
  EXPECT_EQ(a.comm_seconds, b.comm_seconds);
  EXPECT_EQ(a.data_seconds, b.data_seconds);
  EXPECT_EQ(a.attempt, b.attempt);
}

TEST(ScanMetricRecord, TakesEveryStepRecordTheWriterWritesWithItsValues) {
  std::mt19937_64 random(47);
  std::uniform_real_distribution<double> seconds(0, 3);
  std::uniform_real_distribution<double> time(0, 4.1e9);
  for (int i = 0; i < 20000; ++i) {
    const double s = i % 7 == 0 ? 0.0 : seconds(random) * (i % 3 == 0 ? 1e-7 : 1);
    const std::optional<double> data =
        i % 2 ? std::optional<double>(seconds(random) / 1e3) : std::nullopt;
    const MetricRecord written =
        step(i % 11 == 0 ? std::floor(time(random)) : time(random), i % 1024,
             static_cast<long long>(random() % 2000001) - 1000000, i % 5 ? 64 : 0, s, s / 3, data,
             i % 4 == 0 ? i % 999999 : 0);
    const std::string line = format_step_record(written);
    MetricRecord read;
    ASSERT_TRUE(scan_metric_record(line, read)) << line;
    expect_same_step(read, written);
  }
  MetricRecord extreme;
  ASSERT_TRUE(scan_metric_record(
      format_step_record(
          step(4102444800, std::numeric_limits<int>::max(), std::numeric_limits<long long>::min(),
               std::numeric_limits<long long>::max(), 4102444800, 0, 5e-324, 999999)),
      extreme));
  EXPECT_EQ(extreme.step, std::numeric_limits<long long>::min());
  EXPECT_EQ(extreme.data_seconds, 5e-324);
}

TEST(ScanMetricRecord, TakesEveryCollectiveRecordTheWriterWrites) {
  char buffer[256];
  for (const bool enter : {true, false}) {
    for (const bool failed : {false, true}) {
      for (const int attempt : {0, 3}) {
        const int n =
            format_collective_record(buffer, sizeof buffer, 1795341600.123456, 17, 12345678901ULL,
                                     "reduce_scatter", 4194304, enter, failed, attempt);
        const std::string line(buffer, static_cast<std::size_t>(n));
        MetricRecord r;
        ASSERT_TRUE(scan_metric_record(line, r)) << line;
        EXPECT_EQ(r.type, RecordType::kCollective);
        EXPECT_EQ(r.time, 1795341600.123456);
        EXPECT_EQ(r.rank, 17);
        EXPECT_EQ(r.seq, 12345678901LL);
        EXPECT_EQ(r.op, "reduce_scatter");
        EXPECT_EQ(r.bytes, 4194304);
        EXPECT_EQ(r.enter, enter);
        EXPECT_EQ(r.failed, !enter && failed);
        EXPECT_EQ(r.attempt, attempt);
      }
    }
  }
}

// The readers reuse one record per slot of their pool (cli/ordered_fanout.hpp): a line read into a
// record that held any other record equals the same line read into a fresh one, field for field.
TEST(ScanMetricRecord, ReadsIntoAReusedRecordAsIntoAFreshOne) {
  char coll[256];
  const int n = format_collective_record(coll, sizeof coll, 1795341600.5, 3, 7, "allreduce", 4096,
                                         /*enter=*/false, /*failed=*/true, /*attempt=*/2);
  const std::vector<std::string> lines = {
      R"({"v":2,"type":"binding","time":1795341600.0003,"rank":3,"host":"node0","cpus":"24-31","gpus":"3","nics":{"NCCL_IB_HCA":"mlx5_0"}})",
      format_step_record(step(1795341600.25, 3, 41, 64, 0.5, 0.125, 0.0625, 2)),
      std::string(coll, static_cast<std::size_t>(n)),
      R"({"v":2,"type":"coll","time":1795341601,"rank":3,"seq":8,"op":"broadcast","bytes":8,"phase":"enter"})",
      format_step_record(step(1795341601.5, 3, 42, 64, 0.5, 0.125, std::nullopt, 0)),
      R"({"v":2,"type":"resource","time":1795341602.5,"rank":3,"interval":5.0,"cpu_percent":99.5,"rss_bytes":1048576})",
      R"({"v":2,"type":"coll","time":1795341603,"rank":3,"seq":9,"op":"allgather","bytes":16,"phase":"exit"})",
      R"({"v":2,"type":"interval","time":1795367890.5,"rank":3,"first_step":20,"last_step":21,"count":2,"began":1795367880.0,"samples":{"sum":64.0,"min":32.0,"max":32.0,"lo":347,"counts":[2]},"seconds":{"sum":0.1,"min":0.05,"max":0.05,"lo":-300,"counts":[2]},"comm_seconds":{"sum":0.0,"min":0.0,"max":0.0,"zeros":2}})",
      format_step_record(step(1795341604.5, 3, 43, 32, 0.25, 0, std::nullopt, 0)),
  };
  // Every line after every other (a slot may have held anything).
  for (const auto& before : lines) {
    for (const auto& line : lines) {
      MetricRecord reused;
      if (!scan_metric_record(before, reused)) reused = parse_metric_record(before, "before");
      if (!scan_metric_record(line, reused)) reused = parse_metric_record(line, "line");
      const MetricRecord fresh = parse_metric_record(line, "line");
      EXPECT_TRUE(reused == fresh) << before << "\nthen\n" << line;
    }
  }
}

// Lines the scanner leaves to the general parser: the same record in another layout (which the
// parser reads), and damaged or out-of-range ones (which it refuses, naming the field).
TEST(ScanMetricRecord, LeavesAnyOtherTextToTheGeneralParser) {
  const std::string good =
      R"({"v":2,"type":"step","time":1.5,"rank":0,"step":1,"samples":2,"seconds":0.5,"comm_seconds":0.25})";
  MetricRecord r;
  ASSERT_TRUE(scan_metric_record(good, r));
  for (
      const char* line : {
          // Read by the parser, in another layout:
          R"({"v":2, "type":"step","time":1.5,"rank":0,"step":1,"samples":2,"seconds":0.5,"comm_seconds":0.25})",
          R"({"type":"step","v":2,"time":1.5,"rank":0,"step":1,"samples":2,"seconds":0.5,"comm_seconds":0.25})",
          R"({"v":2,"type":"step","time":1.5,"rank":0,"step":1,"samples":2,"seconds":0.5,"comm_seconds":0.25,"x":1})",
          R"({"v":2,"type":"step","time":1.5,"rank":0,"step":1,"samples":2,"seconds":0.5,"comm_seconds":0.25} )",
          R"({"v":1,"time":1.5,"rank":0,"step":1,"samples":2,"seconds":0.5})",
          R"({"v":2,"type":"coll","time":1,"rank":0,"seq":1,"op":"all\u0072educe","bytes":8,"phase":"exit"})",
          // Refused by the parser:
          R"({"v":2,"type":"step","time":1.5,"rank":0,"step":1,"samples":2.0,"seconds":0.5,"comm_seconds":0.25})",
          R"({"v":2,"type":"step","time":1.5,"rank":0,"step":1,"samples":-2,"seconds":0.5,"comm_seconds":0.25})",
          R"({"v":2,"type":"step","time":1.5,"rank":0,"step":01,"samples":2,"seconds":0.5,"comm_seconds":0.25})",
          R"({"v":2,"type":"step","time":1.5,"rank":0,"step":1,"samples":2,"seconds":.5,"comm_seconds":0.25})",
          R"({"v":2,"type":"step","time":1.5,"rank":0,"step":1,"samples":2,"seconds":0.5,"comm_seconds":1e999})",
          R"({"v":2,"type":"step","time":1.5,"rank":0,"step":1,"samples":2,"seconds":0.5,"comm_seconds":inf})",
          R"({"v":2,"type":"step","time":4102444801,"rank":0,"step":1,"samples":2,"seconds":0.5,"comm_seconds":0.25})",
          R"({"v":2,"type":"step","time":1.5,"rank":2147483648,"step":1,"samples":2,"seconds":0.5,"comm_seconds":0.25})",
          R"({"v":2,"type":"step","time":1.5,"rank":0,"step":9223372036854775808,"samples":2,"seconds":0.5,"comm_seconds":0.25})",
          R"({"v":2,"type":"step","time":1.5,"rank":0,"step":1,"samples":2,"seconds":0.5,"comm_seconds":0.25,"attempt":1000000})",
          R"({"v":2,"type":"step","time":1.5,"rank":0,"step":1,"samples":2,"seconds":0.5,"comm_seconds":0.25}})",
          R"({"v":2,"type":"step","time":1.5,"rank":0,"step":1,"samples":2,"seconds":0.5,"comm_seconds":0.25)",
          R"({"v":2,"type":"coll","time":1,"rank":0,"seq":1,"op":"x","bytes":8,"phase":"exit","failed":1})",
          R"({"v":2,"type":"coll","time":1,"rank":0,"seq":1,"op":"x","bytes":8,"phase":"done"})",
          R"({"v":2,"type":"coll","time":1,"rank":0,"seq":-1,"op":"x","bytes":8,"phase":"exit"})",
          R"({"v":3,"type":"coll","time":1,"rank":0,"seq":1,"op":"x","bytes":8,"phase":"exit"})",
          "{\"v\":2,\"type\":\"coll\",\"time\":1,\"rank\":0,\"seq\":1,\"op\":\"\xc3\xa9\","
          "\"bytes\":8,"
          "\"phase\":\"exit\"}",
      }) {
    MetricRecord declined;
    EXPECT_FALSE(scan_metric_record(line, declined)) << line;
  }
}

}  // namespace
}  // namespace dtrain::records
