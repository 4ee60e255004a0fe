// The metric record schema from both sides: what the Meter writes reads back as the same record,
// and what the readers refuse is named with the file, line and field.
#include "records/metric_record.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace dtrain::records {
namespace {

std::string message(const char* line) {
  try {
    parse_metric_record(line, "rank-00001.jsonl:4");
  } catch (const MetricFormatError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MetricRecord, ParsesVersion1) {
  auto r = parse_metric_record(
      R"({"v":1,"time":1.7e9,"rank":3,"step":7,"samples":128,"seconds":0.25})", "f:1");
  EXPECT_EQ(r.type, RecordType::kStep);
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.step, 7);
  EXPECT_EQ(r.samples, 128);
  EXPECT_DOUBLE_EQ(r.seconds, 0.25);
  EXPECT_FALSE(r.comm_seconds);
}

TEST(MetricRecord, ParsesVersion2StepsAndHeartbeatsIgnoringUnknownFields) {
  auto s = parse_metric_record(
      R"({"v":2,"type":"step","time":1.5,"rank":1,"step":2,"samples":64,"seconds":0.5,)"
      R"("comm_seconds":0.125,"data_seconds":0.0625,"gpu":"A100"})",
      "f:1");
  EXPECT_EQ(s.version, 2);
  EXPECT_DOUBLE_EQ(*s.comm_seconds, 0.125);
  EXPECT_DOUBLE_EQ(*s.data_seconds, 0.0625);
  auto c = parse_metric_record(
      R"({"v":2,"type":"coll","time":2.5,"rank":1,"seq":9,"op":"allreduce","bytes":4096,"phase":"exit"})",
      "f:2");
  EXPECT_EQ(c.type, RecordType::kCollective);
  EXPECT_EQ(c.seq, 9);
  EXPECT_EQ(c.op, "allreduce");
  EXPECT_EQ(c.bytes, 4096);
  EXPECT_FALSE(c.enter);
  EXPECT_DOUBLE_EQ(c.time, 2.5);
}

TEST(MetricRecord, BadLinesNameTheFileLineAndField) {
  EXPECT_EQ(message("not json"), "dtrain: rank-00001.jsonl:4: expected one JSON object per line");
  EXPECT_EQ(message(R"({"v":1,"rank":0,"step":1,"seconds":1})"),
            "dtrain: rank-00001.jsonl:4: missing field \"samples\"");
  EXPECT_EQ(message(R"({"v":1,"rank":0,"step":1,"samples":"x","seconds":1})"),
            "dtrain: rank-00001.jsonl:4: field \"samples\": expected an integer from 0 to "
            "9223372036854775807, got \"x\"");
  EXPECT_EQ(message(R"({"v":3,"rank":0,"step":1,"samples":1,"seconds":1})"),
            "dtrain: rank-00001.jsonl:4: schema version 3 is not supported; expected 1 to 2");
  EXPECT_EQ(message(R"({"v":2,"type":"step","time":1,"rank":0,"step":1,"samples":1,"seconds":1})"),
            "dtrain: rank-00001.jsonl:4: missing field \"comm_seconds\"");
  EXPECT_EQ(message(R"({"v":2,"type":"gpu","time":1,"rank":0})"),
            "dtrain: rank-00001.jsonl:4: field \"type\": expected \"step\", \"interval\", "
            "\"coll\", \"resource\" or \"binding\", got \"gpu\"");
  EXPECT_EQ(
      message(
          R"({"v":2,"type":"coll","time":1,"rank":0,"seq":0,"op":"allreduce","bytes":8,"phase":"in"})"),
      "dtrain: rank-00001.jsonl:4: field \"phase\": expected \"enter\" or \"exit\", "
      "got \"in\"");
  EXPECT_EQ(message(R"({"v":1,"rank":0,"step":1,"samples":1,"seconds":-1})"),
            "dtrain: rank-00001.jsonl:4: field \"seconds\": expected a number from 0 to "
            "4102444800, got -1");
}

TEST(MetricRecord, AStepRecordWrittenReadsBackWithTheDocumentedFieldOrder) {
  MetricRecord r;
  r.time = 1795341600.25;
  r.rank = 3;
  r.step = 7;
  r.samples = 128;
  r.seconds = 0.1;
  r.comm_seconds = 0.025;
  const std::string line = format_step_record(r);
  EXPECT_EQ(line, R"({"v":2,"type":"step","time":1795341600.25,"rank":3,"step":7,"samples":128,)"
                  R"("seconds":0.1,"comm_seconds":0.025})");
  const MetricRecord back = parse_metric_record(line, "f:1");
  EXPECT_EQ(back.version, kMetricSchemaVersion);
  EXPECT_EQ(back.type, RecordType::kStep);
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.step, 7);
  EXPECT_EQ(back.samples, 128);
  EXPECT_EQ(back.seconds, 0.1);  // the shortest text that reads back as the same double
  EXPECT_EQ(back.comm_seconds, 0.025);
  EXPECT_FALSE(back.data_seconds);

  r.data_seconds = 0.5;
  r.comm_seconds.reset();
  const MetricRecord with_data = parse_metric_record(format_step_record(r), "f:2");
  EXPECT_EQ(with_data.data_seconds, 0.5);
  EXPECT_EQ(with_data.comm_seconds, 0.0);  // the writer always writes it; unset is 0
}

// A restarted job appends to the same files: records past attempt 0 say which attempt wrote them
// (records without the field, as every file before it, read as attempt 0).
TEST(MetricRecord, RecordsOfALaterAttemptCarryIt) {
  char buf[256];
  const int n = format_collective_record(buf, sizeof buf, 1795341600.5, 2, 0, "allreduce", 8,
                                         /*enter=*/false, /*failed=*/false,
                                         /*attempt=*/3);
  const std::string line(buf, static_cast<std::size_t>(n));
  EXPECT_EQ(line,
            R"({"v":2,"type":"coll","time":1795341600.500000,"rank":2,"seq":0,"op":"allreduce",)"
            R"("bytes":8,"phase":"exit","attempt":3})");
  EXPECT_EQ(parse_metric_record(line, "f:1").attempt, 3);
  MetricRecord r;
  r.step = 4;
  r.attempt = 1;
  const std::string step = format_step_record(r);
  EXPECT_TRUE(step.ends_with(R"(,"attempt":1})")) << step;
  EXPECT_EQ(parse_metric_record(step, "f:2").attempt, 1);
  r.attempt = 0;
  EXPECT_EQ(format_step_record(r).find("attempt"), std::string::npos);
  EXPECT_EQ(parse_metric_record(format_step_record(r), "f:3").attempt, 0);
  try {
    parse_metric_record(R"({"v":2,"type":"step","time":1,"rank":0,"step":1,"samples":1,)"
                        R"("seconds":1,"comm_seconds":0,"attempt":-1})",
                        "f:4");
    FAIL() << "a negative attempt was accepted";
  } catch (const MetricFormatError& e) {
    EXPECT_STREQ(e.what(),
                 "dtrain: f:4: field \"attempt\": expected an integer from 0 to 999999, "
                 "got -1");
  }
}

TEST(MetricRecord, AHeartbeatWrittenReadsBack) {
  char buf[256];
  const int n = format_collective_record(buf, sizeof buf, 1795341600.5, 2, 41, "allreduce",
                                         1u << 20, /*enter=*/true);
  const std::string line(buf, static_cast<std::size_t>(n));
  EXPECT_EQ(line,
            R"({"v":2,"type":"coll","time":1795341600.500000,"rank":2,"seq":41,"op":"allreduce",)"
            R"("bytes":1048576,"phase":"enter"})");
  const MetricRecord back = parse_metric_record(line, "f:1");
  EXPECT_EQ(back.type, RecordType::kCollective);
  EXPECT_EQ(back.rank, 2);
  EXPECT_EQ(back.seq, 41);
  EXPECT_EQ(back.op, "allreduce");
  EXPECT_EQ(back.bytes, 1 << 20);
  EXPECT_TRUE(back.enter);
  EXPECT_DOUBLE_EQ(back.time, 1795341600.5);
  EXPECT_FALSE(back.failed);
}

TEST(MetricRecord, AFailedCollectiveSaysSoInItsExitRecord) {
  char buf[256];
  const int n = format_collective_record(buf, sizeof buf, 1795341600.5, 2, 41, "allreduce", 8,
                                         /*enter=*/false, /*failed=*/true);
  const std::string line(buf, static_cast<std::size_t>(n));
  EXPECT_EQ(line,
            R"({"v":2,"type":"coll","time":1795341600.500000,"rank":2,"seq":41,"op":"allreduce",)"
            R"("bytes":8,"phase":"exit","failed":true})");
  EXPECT_TRUE(parse_metric_record(line, "f:1").failed);
  EXPECT_THROW(parse_metric_record(R"({"v":2,"type":"coll","time":1,"rank":0,"seq":1,"op":"x",)"
                                   R"("bytes":0,"phase":"exit","failed":"yes"})",
                                   "f:2"),
               MetricFormatError);
}

// Numbers past a field's type were narrowed silently: "v" 4294967298 read as 2, "rank"
// 4294967299 as 3, 2^64-1 as -1; a time of -1e18 reached the trace as INT64_MIN microseconds.
// Each is refused naming the field, its range and the value as written.
TEST(MetricRecord, FieldsOutOfTheirRangeAreRefusedAsWritten) {
  const std::string step = R"({"v":2,"type":"step","time":1795341600,"rank":1,"step":1,)";
  const std::string coll = R"({"v":2,"type":"coll","time":1795341600,"rank":1,"op":"allreduce",)";
  EXPECT_EQ(message(R"({"v":4294967298,"type":"step","time":1,"rank":0,"step":1,"samples":1,)"
                    R"("seconds":1,"comm_seconds":0})"),
            "dtrain: rank-00001.jsonl:4: schema version 4294967298 is not supported; expected 1 "
            "to 2");
  EXPECT_EQ(message(R"({"v":18446744073709551615,"rank":0})"),
            "dtrain: rank-00001.jsonl:4: schema version 18446744073709551615 is not supported; "
            "expected 1 to 2");
  EXPECT_EQ(message(R"({"v":2,"type":"step","time":1,"rank":4294967299,"step":1,"samples":1,)"
                    R"("seconds":1,"comm_seconds":0})"),
            "dtrain: rank-00001.jsonl:4: field \"rank\": expected an integer from 0 to "
            "2147483647, got 4294967299");
  EXPECT_EQ(
      message((step + R"("samples":18446744073709551615,"seconds":1,"comm_seconds":0})").c_str()),
      "dtrain: rank-00001.jsonl:4: field \"samples\": expected an integer from 0 to "
      "9223372036854775807, got 18446744073709551615");
  EXPECT_EQ(message((coll + R"("seq":18446744073709551615,"bytes":8,"phase":"enter"})").c_str()),
            "dtrain: rank-00001.jsonl:4: field \"seq\": expected an integer from 0 to "
            "9223372036854775807, got 18446744073709551615");
  EXPECT_EQ(message((coll + R"("seq":1,"bytes":-8,"phase":"enter"})").c_str()),
            "dtrain: rank-00001.jsonl:4: field \"bytes\": expected an integer from 0 to "
            "9223372036854775807, got -8");
  EXPECT_EQ(message(R"({"v":2,"type":"step","time":-1e18,"rank":1,"step":1,"samples":1,)"
                    R"("seconds":1,"comm_seconds":0})"),
            "dtrain: rank-00001.jsonl:4: field \"time\": expected Unix seconds from 0 to "
            "4102444800, got -1e+18");
  EXPECT_EQ(message((step + R"("samples":1,"seconds":1e300,"comm_seconds":0})").c_str()),
            "dtrain: rank-00001.jsonl:4: field \"seconds\": expected a number from 0 to "
            "4102444800, got 1e+300");
  EXPECT_EQ(
      message((step + R"("samples":1,"seconds":1,"comm_seconds":0,"attempt":2147483648})").c_str()),
      "dtrain: rank-00001.jsonl:4: field \"attempt\": expected an integer from 0 to "
      "999999, got 2147483648");
  // The ends of each range are in it.
  const MetricRecord r = parse_metric_record(
      R"({"v":2,"type":"step","time":4102444800,"rank":2147483647,"step":-9223372036854775808,)"
      R"("samples":9223372036854775807,"seconds":0,"comm_seconds":0,"attempt":999999})",
      "f:1");
  EXPECT_EQ(r.rank, 2147483647);
  EXPECT_EQ(r.step, std::numeric_limits<long long>::min());
  EXPECT_EQ(r.samples, std::numeric_limits<long long>::max());
  EXPECT_EQ(r.attempt, 999999);
}

// The resource record of docs/metrics.md, byte for byte: the fields in the documented order, the
// GPU ones only with a GPU, each reading only when NVML took it.
TEST(MetricRecord, AResourceRecordWrittenReadsBackWithTheDocumentedFieldOrder) {
  MetricRecord r;
  r.time = 1795341600.5;
  r.rank = 3;
  r.interval = 5.0;
  r.cpu_percent = 97.5;
  r.rss_bytes = 536870912;
  EXPECT_EQ(format_resource_record(r),
            R"({"v":2,"type":"resource","time":1795341600.5,"rank":3,"interval":5.0,)"
            R"("cpu_percent":97.5,"rss_bytes":536870912})");
  r.gpu = GpuSample{2, 87.0, 16106127360LL, 251.5};
  r.attempt = 1;
  const std::string line = format_resource_record(r);
  EXPECT_EQ(line, R"({"v":2,"type":"resource","time":1795341600.5,"rank":3,"interval":5.0,)"
                  R"("cpu_percent":97.5,"rss_bytes":536870912,"gpu":2,"gpu_util_percent":87.0,)"
                  R"("gpu_memory_bytes":16106127360,"gpu_power_watts":251.5,"attempt":1})");
  const MetricRecord back = parse_metric_record(line, "f:1");
  EXPECT_EQ(back.type, RecordType::kResource);
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.attempt, 1);
  EXPECT_DOUBLE_EQ(back.interval, 5.0);
  EXPECT_DOUBLE_EQ(back.cpu_percent, 97.5);
  EXPECT_EQ(back.rss_bytes, 536870912);
  ASSERT_TRUE(back.gpu);
  EXPECT_EQ(back.gpu->index, 2);
  EXPECT_EQ(back.gpu->util_percent, 87.0);
  EXPECT_EQ(back.gpu->memory_bytes, 16106127360LL);
  EXPECT_EQ(back.gpu->power_watts, 251.5);
  // A board without power readings: that field alone is absent.
  r.gpu->power_watts.reset();
  const MetricRecord no_power = parse_metric_record(format_resource_record(r), "f:2");
  EXPECT_EQ(format_resource_record(r).find("gpu_power_watts"), std::string::npos);
  ASSERT_TRUE(no_power.gpu);
  EXPECT_FALSE(no_power.gpu->power_watts);
  EXPECT_EQ(no_power.gpu->util_percent, 87.0);
  // Without a GPU: no GPU field at all, not zeros.
  const MetricRecord cpu_only = parse_metric_record(
      R"({"v":2,"type":"resource","time":1.5,"rank":0,"interval":2,"cpu_percent":0,"rss_bytes":1})",
      "f:3");
  EXPECT_FALSE(cpu_only.gpu);
}

TEST(MetricRecord, ResourceFieldsOutOfTheirRangeAreRefused) {
  const std::string head = R"({"v":2,"type":"resource","time":1795341600,"rank":1,)";
  EXPECT_EQ(message((head + R"("cpu_percent":1,"rss_bytes":1})").c_str()),
            "dtrain: rank-00001.jsonl:4: missing field \"interval\"");
  EXPECT_EQ(message((head + R"("interval":1,"cpu_percent":-5,"rss_bytes":1})").c_str()),
            "dtrain: rank-00001.jsonl:4: field \"cpu_percent\": expected a number from 0 to "
            "100000000, got -5");
  EXPECT_EQ(message((head + R"("interval":1,"cpu_percent":1,"rss_bytes":-1})").c_str()),
            "dtrain: rank-00001.jsonl:4: field \"rss_bytes\": expected an integer from 0 to "
            "9223372036854775807, got -1");
  EXPECT_EQ(message((head + R"("interval":1,"cpu_percent":1,"rss_bytes":1,"gpu":0,)"
                            R"("gpu_util_percent":101})")
                        .c_str()),
            "dtrain: rank-00001.jsonl:4: field \"gpu_util_percent\": expected a number from 0 "
            "to 100, got 101");
  EXPECT_EQ(message((head + R"("interval":1,"cpu_percent":1,"rss_bytes":1,"gpu":-1})").c_str()),
            "dtrain: rank-00001.jsonl:4: field \"gpu\": expected an integer from 0 to "
            "2147483647, got -1");
}

}  // namespace
}  // namespace dtrain::records

namespace dtrain::records {
namespace {

MetricRecord binding_record() {
  MetricRecord r;
  r.type = RecordType::kBinding;
  r.time = 1795341600.5;
  r.rank = 3;
  r.attempt = 1;
  r.binding.host = "node01";
  r.binding.cpus = "0-3,8";
  r.binding.gpus = "2";
  r.binding.nics = {{"DTRAIN_NICS", "mlx5_0"}, {"NCCL_IB_HCA", "=mlx5_0"}};
  return r;
}

TEST(MetricRecord, BindingRecordsHaveTheDocumentedBytesAndReadBack) {
  const std::string line = format_binding_record(binding_record());
  EXPECT_EQ(line, R"({"v":2,"type":"binding","time":1795341600.5,"rank":3,"host":"node01",)"
                  R"("cpus":"0-3,8","gpus":"2","nics":{"DTRAIN_NICS":"mlx5_0",)"
                  R"("NCCL_IB_HCA":"=mlx5_0"},"attempt":1})");
  const MetricRecord back = parse_metric_record(line, "f:1");
  EXPECT_EQ(back.type, RecordType::kBinding);
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.attempt, 1);
  EXPECT_EQ(back.binding.host, "node01");
  EXPECT_EQ(back.binding.cpus, "0-3,8");
  EXPECT_EQ(back.binding.gpus, "2");
  const std::vector<std::pair<std::string, std::string>> nics = {{"DTRAIN_NICS", "mlx5_0"},
                                                                 {"NCCL_IB_HCA", "=mlx5_0"}};
  EXPECT_EQ(back.binding.nics, nics);
}

TEST(MetricRecord, ABindingWithoutGpusOrNicsLeavesThemOut) {
  MetricRecord r = binding_record();
  r.attempt = 0;
  r.binding.gpus.reset();
  r.binding.nics.clear();
  const std::string line = format_binding_record(r);
  EXPECT_EQ(line, R"({"v":2,"type":"binding","time":1795341600.5,"rank":3,"host":"node01",)"
                  R"("cpus":"0-3,8","nics":{}})");
  const MetricRecord back = parse_metric_record(line, "f:1");
  EXPECT_FALSE(back.binding.gpus);
  EXPECT_TRUE(back.binding.nics.empty());
  // Set but empty: the rank sees no GPU, which is not the same as a variable left unset.
  r.binding.gpus = "";
  EXPECT_EQ(parse_metric_record(format_binding_record(r), "f:2").binding.gpus, "");
}

TEST(MetricRecord, BadBindingRecordsNameTheField) {
  EXPECT_EQ(message(R"({"v":2,"type":"binding","time":1,"rank":0,"host":"n","nics":{}})"),
            "dtrain: rank-00001.jsonl:4: missing field \"cpus\"");
  EXPECT_EQ(message(R"({"v":2,"type":"binding","time":1,"rank":0,"host":"n","cpus":3,"nics":{}})"),
            "dtrain: rank-00001.jsonl:4: field \"cpus\": expected a string, got 3");
  EXPECT_EQ(message(R"({"v":2,"type":"binding","time":1,"rank":0,"host":"n","cpus":"0",)"
                    R"("nics":"mlx5_0"})"),
            "dtrain: rank-00001.jsonl:4: field \"nics\": expected an object of variable names "
            "and values, got \"mlx5_0\"");
  EXPECT_EQ(message(R"({"v":2,"type":"binding","time":1,"rank":0,"host":"n","cpus":"0",)"
                    R"("nics":{"NCCL_IB_HCA":1}})"),
            "dtrain: rank-00001.jsonl:4: field \"nics\": expected \"NCCL_IB_HCA\" to be a "
            "string, got 1");
}

}  // namespace
}  // namespace dtrain::records

namespace dtrain::records {
namespace {

TEST(MetricRecord, IntervalRecordsReadBackAndAreCheckedAgainstTheirCount) {
  MetricRecord r;
  r.type = RecordType::kInterval;
  r.time = 1795367890.5;
  r.rank = 3;
  r.attempt = 1;
  IntervalAccumulator acc(IntervalPolicy{100, 5, 60, 0, 4, 2});
  acc.add(StepMeasure{20, 32, 0.125, 0.03125, 0.0625, 1795367880.125});
  acc.add(StepMeasure{21, 32, 0.25, 0, std::nullopt, 1795367880.375});
  r.step_interval = *acc.take();
  const std::string line = format_interval_record(r);
  EXPECT_EQ(
      line,
      R"({"v":2,"type":"interval","time":1795367890.5,"rank":3,"first_step":20,"last_step":21,)"
      R"("count":2,"began":1795367880.0,)"
      R"("samples":{"sum":64.0,"min":32.0,"max":32.0,"lo":347,"counts":[2]},)"
      R"("seconds":{"sum":0.375,"min":0.125,"max":0.25,"lo":-207,"counts":[1,-68,1]},)"
      R"("comm_seconds":{"sum":0.03125,"min":0.0,"max":0.03125,"zeros":1,"lo":-346,"counts":[1]},)"
      R"("data_seconds":{"sum":0.0625,"min":0.0625,"max":0.0625,"lo":-277,"counts":[1]},"attempt":1})");
  const MetricRecord back = parse_metric_record(line, "f:1");
  EXPECT_EQ(back.type, RecordType::kInterval);
  EXPECT_EQ(back.attempt, 1);
  EXPECT_EQ(back.step_interval, r.step_interval);

  EXPECT_EQ(message(R"({"v":2,"type":"interval","time":1,"rank":0,"first_step":5,"last_step":4,)"
                    R"("count":1,"began":1,"samples":{"sum":1,"min":1,"max":1,"zeros":1}})"),
            "dtrain: rank-00001.jsonl:4: field \"last_step\": expected an integer from 5 to "
            "9223372036854775807, got 4");
  EXPECT_EQ(
      message(R"({"v":2,"type":"interval","time":1,"rank":0,"first_step":5,"last_step":6,)"
              R"("count":2,"began":1,"samples":{"sum":1,"min":1,"max":1,"lo":0,"counts":[1]}})"),
      "dtrain: rank-00001.jsonl:4: field \"samples\": expected 2 values (\"count\"), got 1");
  EXPECT_EQ(message(R"({"v":2,"type":"interval","time":1,"rank":0,"first_step":5,"last_step":6,)"
                    R"("count":1,"began":1,"samples":{"sum":1,"min":1,"max":1,"lo":"x"}})"),
            "dtrain: rank-00001.jsonl:4: field \"samples\": field \"lo\": expected an integer from "
            "-2072 to 4375, got \"x\"");
}

}  // namespace
}  // namespace dtrain::records
