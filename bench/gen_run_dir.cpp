// Writes the run directory of a synthetic N-rank x S-step job as libdtrain's Meter, run-rank and
// the loggers write it, for the readers' benchmark at scale (issue 47; docs/benchmarks.md,
// "Records at scale") and its small check in the default run (cli_gen_run_dir):
//   DIR/rank-NNNNN.jsonl  a binding record, then per step as the Meter writes it at DETAIL
//                         (intervals: the first 20 steps whole, interval records through
//                         records::IntervalAccumulator, the first 200 collectives' heartbeats, then
//                         the latest pair every 10 s; steps: a step record and two heartbeats per
//                         step), a resource sample every 5 s
//   DIR/rank-NNNNN.log    run-rank's start line, a line every 100 steps, the end
//   DIR/arrivals/rank-NNNNN.txt  the rank's last two windows of collective waits
// Four ranks a node (node0, node1, ...); steps of about 72 ms (50,000 an hour), one allreduce
// each; rank 1 computes 30 % longer and the others wait for it. Every rank completes steps 0 to
// S-2; in step S-1 rank N/3 fails ("error: CUDA out of memory", exit status 1) before entering
// allreduce #S-1, which the others enter and wait in until they are killed (SIGTERM): what `logs
// --first-error` and `--hang` find. Every line is made by the writers of dtrain::records and
// dtrain::report (the Meter's formatters, the log and arrival formats), so the format cannot drift
// from what a real job writes. Deterministic for a SEED.
//   gen_run_dir DIR RANKS STEPS [intervals|steps] [SEED]
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "records/live_status.hpp"
#include "records/log_line.hpp"
#include "records/metric_record.hpp"
#include "records/rank_files.hpp"
#include "records/rank_lines.hpp"
#include "records/record_detail.hpp"
#include "records/run_dir_layout.hpp"
#include "records/step_interval.hpp"
#include "report/arrival_skew.hpp"

namespace {

namespace records = dtrain::records;
namespace report = dtrain::report;

constexpr double kStart = 1795341600.0;  // 2026-11-22T10:00:00Z
constexpr int kRanksPerNode = 4;
// The Meter's cadences (runtime/meter.cpp, docs/metrics.md): the first collectives' heartbeats
// written as they come, then the latest pair at least this often; resource samples.
constexpr long long kFirstHeartbeats = 200;
constexpr double kHeartbeatRefresh = 10;
constexpr double kResourceInterval = 5;
constexpr long long kLogEvery = 100;
constexpr std::size_t kBytes = 4 << 20;  // a gradient allreduce of 4 MiB

struct Options {
  std::string dir;
  int ranks = 0;
  long long steps = 0;
  records::RecordDetail detail = records::kDefaultRecordDetail;
  unsigned seed = 47;
};

class Out {
 public:
  explicit Out(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "w")) {
    if (!file_) fail();
    std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  }
  ~Out() {
    if (std::fclose(file_) != 0) fail();
  }
  void line(const std::string& text) { line(text.data(), text.size()); }
  void line(const char* text, std::size_t size) {
    write(text, size);
    write("\n", 1);
  }
  void write(const char* text, std::size_t size) {
    if (std::fwrite(text, 1, size, file_) != size) fail();
  }

 private:
  [[noreturn]] void fail() const {
    std::fprintf(stderr, "gen_run_dir: %s: %s\n", path_.c_str(), std::strerror(errno));
    std::exit(1);
  }
  std::string path_;
  std::FILE* file_;
};

std::string host_of(int rank) { return "node" + std::to_string(rank / kRanksPerNode); }

std::string log_line(double unix_seconds, const std::string& text) {
  return records::format_log_time(static_cast<std::int64_t>(std::llround(unix_seconds * 1e6))) +
         " " + text;
}

records::MetricRecord own_record(records::RecordType type, double time, int rank) {
  records::MetricRecord r;
  r.version = records::kMetricSchemaVersion;
  r.type = type;
  r.time = time;
  r.rank = rank;
  return r;
}

void write_rank(const Options& o, int rank) {
  const std::string base = o.dir + "/";
  Out metrics(base + records::rank_file_name(rank, records::kMetricsExtension));
  Out log(base + records::rank_file_name(rank, records::kLogExtension));
  std::mt19937_64 random(o.seed * 1000003ULL + static_cast<unsigned>(rank));
  std::lognormal_distribution<double> noise(0, 0.05);
  const int culprit = o.ranks / 3;
  const int slow = o.ranks > 1 ? 1 : -1;
  const bool full = o.detail == records::RecordDetail::kSteps;

  double t = kStart + (rank % 97) * 1e-4;
  records::RankStart start;
  start.rank = rank;
  start.world_size = o.ranks;
  start.host = host_of(rank);
  start.local_rank = rank % kRanksPerNode;
  start.local_size = kRanksPerNode;
  start.pid = 10000 + rank;
  start.command = "python train.py";
  log.line(log_line(t, records::format_rank_start(start)));

  auto binding = own_record(records::RecordType::kBinding, t, rank);
  binding.binding.host = start.host;
  binding.binding.cpus =
      std::to_string(start.local_rank * 8) + "-" + std::to_string(start.local_rank * 8 + 7);
  binding.binding.gpus = std::to_string(start.local_rank);
  metrics.line(records::format_binding_record(binding));

  records::IntervalAccumulator intervals;
  const auto write_interval = [&](const std::optional<records::StepInterval>& interval) {
    if (!interval) return;
    auto r = own_record(records::RecordType::kInterval, t, rank);
    r.step_interval = *interval;
    metrics.line(records::format_interval_record(r));
  };
  char enter[256], exit[256];
  int enter_size = 0, exit_size = 0;
  bool pending = false;  // the latest heartbeats not yet written (intervals)
  double heartbeats_written = t, last_sample = t;
  report::RankArrivals arrivals;
  arrivals.rank = rank;
  arrivals.host = start.host;
  arrivals.doing = report::Activity::kComputing;
  arrivals.cpu_share = 0.97;

  // Rank `culprit` never starts the last step; the others hang in its allreduce.
  const long long done = o.steps - 1;
  for (long long step = 0; step <= done; ++step) {
    const double data = 0.004 * noise(random);
    const double compute = 0.05 * noise(random) * (rank == slow ? 1.3 : 1.0);
    // The others wait for the slow rank in the allreduce.
    const double wait = rank == slow ? 0.001 * noise(random) : 0.016 * noise(random);
    const double transfer = 0.002 * noise(random);
    const double entered = t + data + compute;
    if (step == done && rank == culprit) break;
    enter_size = records::format_collective_record(enter, sizeof enter, entered, rank,
                                                   static_cast<std::uint64_t>(step), "allreduce",
                                                   kBytes, true);
    const std::size_t window = static_cast<std::size_t>(step) / records::kArrivalWindowCalls;
    if (arrivals.windows.empty() || arrivals.windows.back().index != window) {
      if (arrivals.windows.size() == 2) arrivals.windows.erase(arrivals.windows.begin());
      arrivals.windows.push_back({window, static_cast<std::int64_t>(entered * 1e6), 0, {}});
    }
    if (step == done) {
      // Hung in it: the Meter writes the enter once nothing moved for 2 s.
      metrics.line(enter, static_cast<std::size_t>(enter_size));
      break;
    }
    const double left = entered + wait + transfer;
    exit_size = records::format_collective_record(exit, sizeof exit, left, rank,
                                                  static_cast<std::uint64_t>(step), "allreduce",
                                                  kBytes, false);
    arrivals.windows.back().waits_us.push_back(static_cast<std::uint32_t>(wait * 1e6));
    arrivals.windows.back().last_leave_us = static_cast<std::int64_t>(left * 1e6);
    const double seconds = left - t + 0.0005;
    t += seconds;
    if (full || step < kFirstHeartbeats || t - heartbeats_written >= kHeartbeatRefresh) {
      metrics.line(enter, static_cast<std::size_t>(enter_size));
      metrics.line(exit, static_cast<std::size_t>(exit_size));
      heartbeats_written = t;
      pending = false;
    } else {
      pending = true;
    }
    auto r = own_record(records::RecordType::kStep, t, rank);
    r.step = step;
    r.samples = 64;
    r.seconds = seconds;
    r.comm_seconds = wait + transfer;
    r.data_seconds = data;
    if (full) {
      metrics.line(records::format_step_record(r));
    } else {
      const auto added = intervals.add({step, r.samples, seconds, *r.comm_seconds, data, t});
      write_interval(added.closed);
      if (added.full) metrics.line(records::format_step_record(r));
      write_interval(intervals.take_due(t));
    }
    if (t - last_sample >= kResourceInterval) {
      auto sample = own_record(records::RecordType::kResource, t, rank);
      sample.interval = t - last_sample;
      sample.cpu_percent = 97 + 3 * noise(random);
      sample.rss_bytes = 600LL << 20;
      metrics.line(records::format_resource_record(sample));
      last_sample = t;
    }
    if (step % kLogEvery == 0) {
      log.line(log_line(t, "step " + std::to_string(step) + " loss=" +
                               std::to_string(2.5 / (1 + static_cast<double>(step) / 1000))));
    }
  }
  // The end: the open interval and the heartbeats not yet written, as the Meter's destructor or its
  // quiet-spell write leaves them.
  write_interval(intervals.take());
  if (pending) {
    metrics.line(enter, static_cast<std::size_t>(enter_size));
    metrics.line(exit, static_cast<std::size_t>(exit_size));
  }
  records::RankExit end;
  end.rank = rank;
  if (rank == culprit) {
    log.line(log_line(t + 0.01, "error: CUDA out of memory on rank " + std::to_string(rank)));
    end.status = 1;
    log.line(log_line(t + 0.02, records::format_rank_exit(end)));
  } else {
    end.signal = 15;
    log.line(log_line(t + 30, records::format_rank_exit(end)));
  }
  Out published(base + std::string(records::kArrivalsDir) + "/" +
                records::rank_file_name(rank, "txt"));
  const std::string text = report::format_arrivals(arrivals);
  published.write(text.data(), text.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 6) {
    std::fprintf(stderr, "usage: gen_run_dir DIR RANKS STEPS [intervals|steps] [SEED]\n");
    return 2;
  }
  Options o;
  o.dir = argv[1];
  o.ranks = std::atoi(argv[2]);
  o.steps = std::atoll(argv[3]);
  if (o.ranks <= 0 || o.steps < 2) {
    std::fprintf(stderr, "gen_run_dir: expected RANKS >= 1 and STEPS >= 2, got %s and %s\n",
                 argv[2], argv[3]);
    return 2;
  }
  if (argc > 4) {
    const auto detail = records::parse_record_detail(argv[4]);
    if (!detail) {
      std::fprintf(stderr, "gen_run_dir: expected %s, got \"%s\"\n",
                   std::string(records::kRecordDetailExpected).c_str(), argv[4]);
      return 2;
    }
    o.detail = *detail;
  }
  if (argc > 5) o.seed = static_cast<unsigned>(std::strtoul(argv[5], nullptr, 10));
  const std::string arrivals = o.dir + "/" + std::string(records::kArrivalsDir);
  if ((::mkdir(o.dir.c_str(), 0755) != 0 && errno != EEXIST) ||
      (::mkdir(arrivals.c_str(), 0755) != 0 && errno != EEXIST)) {
    std::fprintf(stderr, "gen_run_dir: %s: %s\n", arrivals.c_str(), std::strerror(errno));
    return 1;
  }
  for (int rank = 0; rank < o.ranks; ++rank) write_rank(o, rank);
  return 0;
}
