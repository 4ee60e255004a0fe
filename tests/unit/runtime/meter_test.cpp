// The Meter's file: its name, its exact bytes, each field read back, buffering, and its errors.
#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <dtrain/dtrain.hpp>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace {
namespace fs = std::filesystem;

// The file's records but the binding record every Meter writes first (its own test below): the
// tests that compare whole files are about the records the calls make.
std::vector<std::string> records_in(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) {
    if (l.find(R"("type":"binding")") == std::string::npos) out.push_back(l);
  }
  return out;
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// ctest removes the launcher variables before init() runs in ctx_'s initializer (CMakeLists.txt:
// bare_env), DTRAIN_RUN_DIR among them.
class MeterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("DTRAIN_RUN_DIR");
    dir_ = fs::temp_directory_path() /
           ("dtrain-meter-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    unsetenv("DTRAIN_RUN_DIR");
    fs::remove_all(dir_);
  }

  fs::path file() const { return dir_ / "rank-00000.jsonl"; }

  std::vector<std::string> lines() const { return records_in(file()); }

  std::string meter_error(const std::string& run_dir) {
    try {
      dtrain::Meter meter(ctx_, run_dir);
    } catch (const dtrain::Error& e) {
      EXPECT_EQ(e.code(), dtrain::Error::Code::kSystem);
      return e.what();
    }
    ADD_FAILURE() << "no error for " << run_dir;
    return "";
  }

  fs::path dir_;
  // No resource samples (docs/metrics.md): these tests compare whole files. Set before ctx_'s
  // init() reads it (ctest's bare_env does not reach tests found by gtest_discover_tests).
  bool no_resource_samples_ = setenv("DTRAIN_RESOURCE_INTERVAL", "0", 1) == 0;
  // A record per step and a heartbeat per collective: the full detail these tests check (the
  // default, interval records, is meter_intervals_test.cpp's).
  bool full_detail_ = setenv("DTRAIN_RECORDS", "steps", 1) == 0;
  dtrain::Context ctx_ = dtrain::init();
};

TEST_F(MeterTest, WritesTheDocumentedBytes) {
  const double before = unix_now();
  {
    dtrain::Meter meter(ctx_, dir_.string());
    EXPECT_TRUE(meter.enabled());
    EXPECT_EQ(meter.path(), file().string());
    meter.record(0, 128, 0.5);
    meter.record(1, 64, 0.25, 0.125);
  }
  const double after = unix_now();
  const std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 2u);
  // Everything but the clock is fixed: field order, spelling, no spaces, shortest numbers.
  // No collective ran, so comm_seconds is 0.0; data_seconds only where it was reported.
  const std::regex line0(
      R"(\{"v":2,"type":"step","time":([0-9]+\.[0-9]+),"rank":0,"step":0,"samples":128,)"
      R"("seconds":0\.5,"comm_seconds":0\.0\})");
  const std::regex line1(
      R"(\{"v":2,"type":"step","time":([0-9]+\.[0-9]+),"rank":0,"step":1,"samples":64,)"
      R"("seconds":0\.25,"comm_seconds":0\.0,"data_seconds":0\.125\})");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(got[0], m, line0)) << got[0];
  const double t0 = std::stod(m[1].str());
  ASSERT_TRUE(std::regex_match(got[1], m, line1)) << got[1];
  const double t1 = std::stod(m[1].str());
  EXPECT_LE(before, t0);
  EXPECT_LE(t0, t1);
  EXPECT_LE(t1, after);
}

// The binding record: the CPUs the creating thread may run on (here narrowed to one, as a
// launcher's --bind-to core would), CUDA_VISIBLE_DEVICES and the NIC variables as the process has
// them, written before any other record.
TEST_F(MeterTest, WritesTheRanksBindingFirst) {
  cpu_set_t all;
  CPU_ZERO(&all);
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  int last = -1;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &all)) last = c;
  }
  ASSERT_GE(last, 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(last, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  for (const char* name : {"DTRAIN_NICS", "NCCL_IB_HCA", "GLOO_SOCKET_IFNAME"}) unsetenv(name);
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  setenv("NCCL_SOCKET_IFNAME", "=lo", 1);
  setenv("UCX_NET_DEVICES", "", 1);  // set but empty: left out
  {
    dtrain::Meter meter(ctx_, dir_.string());
    meter.record(0, 1, 1.0);
  }
  sched_setaffinity(0, sizeof all, &all);
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("NCCL_SOCKET_IFNAME");
  unsetenv("UCX_NET_DEVICES");
  std::ifstream in(file());
  std::string first;
  std::getline(in, first);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::regex binding(R"(\{"v":2,"type":"binding","time":[0-9]+\.[0-9]+,"rank":0,"host":")" +
                           std::string(host) + R"(","cpus":")" + std::to_string(last) +
                           R"(","gpus":"","nics":\{"NCCL_SOCKET_IFNAME":"=lo"\}\})");
  EXPECT_TRUE(std::regex_match(first, binding)) << first;
  EXPECT_EQ(lines().size(), 1u) << "one binding record, then the step";
}

TEST_F(MeterTest, EachFieldReadsBackWithItsType) {
  {
    dtrain::Meter meter(ctx_, dir_.string());
    meter.record(7, 1LL << 40, 0.0412);
  }
  const std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 1u);
  const nlohmann::json r = nlohmann::json::parse(got[0]);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r.size(), 8u) << "a v2 step record without data time has exactly v, type, time, "
                             "rank, step, samples, seconds, comm_seconds";
  EXPECT_TRUE(r["v"].is_number_integer());
  EXPECT_EQ(r["v"].get<int>(), 2);
  EXPECT_EQ(r["type"], "step");
  EXPECT_TRUE(r["comm_seconds"].is_number_float());
  EXPECT_TRUE(r["time"].is_number_float());
  EXPECT_NEAR(r["time"].get<double>(), unix_now(), 60.0);
  EXPECT_TRUE(r["rank"].is_number_integer());
  EXPECT_EQ(r["rank"].get<int>(), 0);
  EXPECT_TRUE(r["step"].is_number_integer());
  EXPECT_EQ(r["step"].get<std::int64_t>(), 7);
  EXPECT_TRUE(r["samples"].is_number_integer());
  EXPECT_EQ(r["samples"].get<std::int64_t>(), 1LL << 40);
  EXPECT_TRUE(r["seconds"].is_number_float());
  EXPECT_EQ(r["seconds"].get<double>(), 0.0412) << "doubles round-trip exactly";
}

TEST_F(MeterTest, FlushWritesEachRecordOnce) {
  dtrain::Meter meter(ctx_, dir_.string());
  meter.record(0, 1, 1.0);
  meter.flush();
  EXPECT_EQ(lines().size(), 1u);
  meter.flush();  // nothing new: nothing written twice
  EXPECT_EQ(lines().size(), 1u);
}

// The file as it is now, polled until it has `want` lines (the background flusher writes them
// without any call from the code); gives up after 20 s. Not a timing assertion: only whether the
// lines ever arrive.
std::vector<std::string> wait_for_lines(const fs::path& file, std::size_t want) {
  std::vector<std::string> out;
  for (int i = 0; i < 2000; ++i) {
    out = records_in(file);
    if (out.size() >= want) break;
    usleep(10000);
  }
  return out;
}

TEST_F(MeterTest, RecordsReachTheFileWithoutFlush) {
  dtrain::Meter meter(ctx_, dir_.string());
  meter.record(0, 1, 1.0);
  EXPECT_EQ(wait_for_lines(file(), 1).size(), 1u);
}

TEST_F(MeterTest, CollectivesWriteEnterAndExitHeartbeatsAndCommSeconds) {
  dtrain::Meter meter(ctx_, dir_.string());
  const std::uint64_t first = ctx_.comm().next_sequence();
  std::vector<float> x(256, 1.0f);
  ctx_.comm().allreduce(std::span<float>(x), dtrain::ReduceOp::kSum);
  ctx_.comm().barrier();
  const std::vector<std::string> got = wait_for_lines(file(), 4);  // no flush() called
  ASSERT_EQ(got.size(), 4u);
  const std::regex coll(
      R"re(\{"v":2,"type":"coll","time":[0-9]+\.[0-9]+,"rank":0,"seq":([0-9]+),"op":"([a-z_]+)",)re"
      R"re("bytes":([0-9]+),"phase":"(enter|exit)"\})re");
  const char* want[4][3] = {{"allreduce", "1024", "enter"},
                            {"allreduce", "1024", "exit"},
                            {"barrier", "0", "enter"},
                            {"barrier", "0", "exit"}};
  for (std::size_t i = 0; i < 4; ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(got[i], m, coll)) << got[i];
    EXPECT_EQ(std::stoull(m[1].str()), first + i / 2) << got[i];
    EXPECT_EQ(m[2].str(), want[i][0]);
    EXPECT_EQ(m[3].str(), want[i][1]);
    EXPECT_EQ(m[4].str(), want[i][2]);
  }
  meter.record(0, 1, 1.0);
  meter.flush();
  const nlohmann::json step = nlohmann::json::parse(lines().back());
  EXPECT_EQ(step["type"], "step");
  EXPECT_GE(step["comm_seconds"].get<double>(), 0.0);
  EXPECT_LE(step["comm_seconds"].get<double>(), 1.0);
}

TEST_F(MeterTest, AnEnterHeartbeatIsOnDiskBeforeTheCollectiveReturns) {
  // The first collective's enter record is written by the entering thread itself (the file was
  // never written before), so it is there the moment the call returns, with no waiting.
  dtrain::Meter meter(ctx_, dir_.string());
  std::vector<float> x(4, 1.0f);
  ctx_.comm().allreduce(std::span<float>(x), dtrain::ReduceOp::kSum);
  const std::vector<std::string> now = lines();
  ASSERT_GE(now.size(), 1u);
  EXPECT_NE(now[0].find(R"("op":"allreduce","bytes":16,"phase":"enter")"), std::string::npos)
      << now[0];
}

TEST_F(MeterTest, DataSecondsAccumulateIntoTheNextRecordOnly) {
  {
    dtrain::Meter meter(ctx_, dir_.string());
    meter.add_data_seconds(0.25);
    meter.add_data_seconds(0.5);
    meter.record(0, 1, 1.0);
    meter.record(1, 1, 1.0);
  }
  const std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(got[0])["data_seconds"].get<double>(), 0.75);
  EXPECT_FALSE(nlohmann::json::parse(got[1]).contains("data_seconds"));
}

// init() reads DTRAIN_RUN_DIR with every other setting: a Context made before it was set keeps
// its Meter off, one made after writes there.
TEST_F(MeterTest, RunDirFromTheEnvironmentAsInitReadIt) {
  setenv("DTRAIN_RUN_DIR", dir_.c_str(), 1);
  EXPECT_FALSE(dtrain::Meter(ctx_).enabled());
  dtrain::Context ctx = dtrain::init();
  {
    dtrain::Meter meter(ctx);
    EXPECT_TRUE(meter.enabled());
    meter.record(3, 10, 1.0);
  }
  EXPECT_EQ(lines().size(), 1u);
}

TEST_F(MeterTest, ArgumentWinsOverTheEnvironment) {
  const fs::path other = dir_ / "other";
  fs::create_directories(other);
  setenv("DTRAIN_RUN_DIR", other.c_str(), 1);
  dtrain::Context ctx = dtrain::init();
  dtrain::Meter meter(ctx, dir_.string());
  EXPECT_EQ(meter.path(), file().string());
}

TEST_F(MeterTest, DisabledWithoutARunDirWritesNothing) {
  {
    dtrain::Meter meter(ctx_);
    EXPECT_FALSE(meter.enabled());
    EXPECT_EQ(meter.path(), "");
    meter.record(0, 1, 1.0);
    meter.flush();
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(MeterTest, AppendsToAnExistingFile) {
  {
    dtrain::Meter meter(ctx_, dir_.string());
    meter.record(0, 1, 1.0);
  }
  {
    dtrain::Meter meter(ctx_, dir_.string());
    meter.record(1, 1, 1.0);
  }
  EXPECT_EQ(lines().size(), 2u);
}

TEST_F(MeterTest, MovedMeterKeepsItsRecords) {
  dtrain::Meter a(ctx_, dir_.string());
  a.record(0, 1, 1.0);
  dtrain::Meter b = std::move(a);
  EXPECT_FALSE(a.enabled());  // NOLINT(bugprone-use-after-move): checking the moved-from state
  b.record(1, 1, 1.0);
  b.flush();
  EXPECT_EQ(lines().size(), 2u);
}

TEST_F(MeterTest, MissingDirectoryNamesThePathAndTheCause) {
  const std::string missing = (dir_ / "no" / "such").string();
  EXPECT_EQ(meter_error(missing), "dtrain: meter: cannot open " + missing +
                                      "/rank-00000.jsonl: No such file or directory; expected an "
                                      "existing, writable run directory");
}

TEST_F(MeterTest, UnwritableDirectoryNamesThePathAndTheCause) {
  // A regular file where the directory should be: refused even for root, unlike a chmod.
  const fs::path not_a_dir = dir_ / "file";
  std::ofstream(not_a_dir) << "x";
  EXPECT_EQ(meter_error(not_a_dir.string()),
            "dtrain: meter: cannot open " + not_a_dir.string() +
                "/rank-00000.jsonl: Not a directory; expected an existing, writable run directory");
}

TEST_F(MeterTest, BadMeasurementsAreRejectedEvenWhenDisabled) {
  for (const std::string& run_dir : {dir_.string(), std::string()}) {
    dtrain::Meter meter(ctx_, run_dir);
    EXPECT_THROW(meter.record(0, -1, 1.0), dtrain::Error);
    EXPECT_THROW(meter.record(0, 1, -0.5), dtrain::Error);
    EXPECT_THROW(meter.record(0, 1, std::numeric_limits<double>::quiet_NaN()), dtrain::Error);
    EXPECT_THROW(meter.record(0, 1, std::numeric_limits<double>::infinity()), dtrain::Error);
  }
  try {
    dtrain::Meter meter(ctx_, dir_.string());
    meter.record(4, -3, 1.0);
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
    EXPECT_EQ(std::string(e.what()),
              "dtrain: meter: record: bad measurement; expected samples >= 0 and finite seconds "
              ">= 0, got samples=-3 seconds=1");
  }
  EXPECT_EQ(lines().size(), 0u);
}

// comm_seconds is the time inside collectives during the step only. A collective before the step
// (a checkpoint's broadcast, Preemption's vote, a loop's allreduce outside its timed part) used to
// be charged to the next step: a C++ loop showed comm % = 518.4 in `dtrain stats`.
TEST_F(MeterTest, CollectivesOutsideTheStepAreNotItsCommSeconds) {
  dtrain::Meter meter(ctx_, dir_.string());
  std::vector<float> x(1 << 16, 1.0f);
  ctx_.comm().allreduce(std::span<float>(x), dtrain::ReduceOp::kSum);
  ctx_.comm().barrier();
  usleep(20000);
  meter.record(0, 1, 0.005);  // the last 5 ms: after both collectives
  ctx_.comm().allreduce(std::span<float>(x), dtrain::ReduceOp::kSum);
  meter.start_step();
  usleep(5000);
  meter.end_step(1);  // timed apart from the allreduce before it
  meter.start_step();
  ctx_.comm().allreduce(std::span<float>(x), dtrain::ReduceOp::kSum);
  meter.end_step(1);
  meter.flush();
  std::vector<nlohmann::json> steps;
  for (const auto& l : lines()) {
    const nlohmann::json r = nlohmann::json::parse(l);
    if (r["type"] == "step") steps.push_back(r);
  }
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0]["comm_seconds"].get<double>(), 0.0) << steps[0];
  EXPECT_EQ(steps[1]["comm_seconds"].get<double>(), 0.0) << steps[1];
  EXPECT_GE(steps[1]["seconds"].get<double>(), 0.005) << steps[1];
  EXPECT_GT(steps[2]["comm_seconds"].get<double>(), 0.0) << steps[2];
  EXPECT_LE(steps[2]["comm_seconds"].get<double>(), steps[2]["seconds"].get<double>()) << steps[2];
}

TEST_F(MeterTest, EndStepNumbersTheStepsAfterTheLastRecorded) {
  dtrain::Meter meter(ctx_, dir_.string());
  EXPECT_EQ(meter.next_step(), 0);
  meter.start_step();
  EXPECT_EQ(meter.end_step(8), 0);
  meter.record(10, 8, 0.1);
  EXPECT_EQ(meter.next_step(), 11);
  meter.start_step();
  EXPECT_EQ(meter.end_step(8), 11);
  meter.start_step();
  EXPECT_EQ(meter.end_step(8, 40), 40);
  meter.start_step();  // a step that failed: replaced by the next start_step()
  meter.start_step();
  EXPECT_EQ(meter.end_step(4), 41);
  meter.flush();
  std::vector<std::int64_t> numbers;
  for (const auto& l : lines())
    numbers.push_back(nlohmann::json::parse(l)["step"].get<std::int64_t>());
  EXPECT_EQ(numbers, (std::vector<std::int64_t>{0, 10, 11, 40, 41}));
  try {
    meter.end_step(1);
    ADD_FAILURE() << "end_step without start_step";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
    EXPECT_EQ(std::string(e.what()),
              "dtrain: meter: end_step: no step started; expected start_step() before it");
  }
  meter.start_step();
  try {
    meter.end_step(-2);
    ADD_FAILURE() << "negative samples";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "dtrain: meter: end_step: bad measurement; expected samples >= 0, got -2");
  }
}

// A restarted attempt numbered its steps from 0 again, so `dtrain stats` dropped every record of
// the failed attempt from step 0 on (40 "redone" where 20 were). Once the Context's Checkpointer
// has loaded the checkpoint of step 19, the Meter goes on at 20, created before or after the load.
TEST_F(MeterTest, StepNumbersContinueFromTheCheckpointTheContextResumedFrom) {
  const std::string ckpt_dir = (dir_ / "ckpt").string();
  {
    dtrain::Checkpointer ckpt(ctx_, ckpt_dir);
    const std::vector<std::byte> state(16, std::byte{7});
    ckpt.save(19, state);
  }
  dtrain::Meter before(ctx_, dir_.string());
  EXPECT_EQ(before.next_step(), 0);
  dtrain::Checkpointer ckpt(ctx_, ckpt_dir);
  const auto c = ckpt.load_latest();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(before.next_step(), 20);
  before.start_step();
  EXPECT_EQ(before.end_step(8), 20);
  EXPECT_EQ(before.next_step(), 21);
  dtrain::Meter after(ctx_, "");
  EXPECT_EQ(after.next_step(), 20);
  before.flush();
  std::vector<std::int64_t> numbers;  // load_latest()'s broadcasts wrote heartbeats too
  for (const auto& l : lines()) {
    const nlohmann::json r = nlohmann::json::parse(l);
    if (r["type"] == "step") numbers.push_back(r["step"].get<std::int64_t>());
  }
  EXPECT_EQ(numbers, (std::vector<std::int64_t>{20}));
}

}  // namespace
