// Per-rank JSON Lines metric records (schema: docs/metrics.md; the record format and the file name
// are records/metric_record.hpp and records/rank_files.hpp, shared with the readers).
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <utility>

#include "comm/engine.hpp"
#include "common/thread_name.hpp"
#include "context_state.hpp"
#include "dtrain/dtrain.hpp"
#include "launch/launcher_env.hpp"
#include "meter_file.hpp"
#include "rank_binding.hpp"
#include "records/metric_record.hpp"
#include "records/rank_files.hpp"

namespace dtrain {
namespace runtime {
namespace {

// A step record is ~150 bytes, a heartbeat ~110: past this the buffer is written at once, and the
// flusher writes whatever is there every kFlushPeriod (twice a second).
constexpr std::size_t kFlushBytes = 64 * 1024;
constexpr auto kFlushPeriod = std::chrono::milliseconds(500);
// A collective's enter record is written by the thread that enters it when the file was last
// written at least this long ago, so that a training loop's once-a-step collective reaches the
// file before it can hang or crash. Waking the flusher instead put two context switches into every
// collective when a rank has one core; writing at every enter would be a system call per
// collective at thousands per second.
constexpr auto kEagerGap = std::chrono::milliseconds(10);
// kIntervals: the latest heartbeats are written once the collectives stopped this long. A hang
// lasts minutes before anyone reads the file; a job whose collectives come less than this apart
// writes none between its interval records.
constexpr auto kQuietHeartbeats = std::chrono::seconds(2);
// kIntervals: a SIGSTOPped rank writes nothing more (its flusher stops with it), so what `dtrain
// logs --hang` reads of it is what it wrote before. The heartbeats of its first collectives are
// written as at kSteps (a stop or hang in a job's first minutes, when most go wrong, leaves the
// exact collective; 200 x 2 lines of ~110 bytes, once), and later the latest ones at least every
// kHeartbeatRefresh (a rank stopped later leaves the collective it was in at most 10 s before:
// 2 lines per 10 s, about 80 KB an hour). multinode_failures_hang named no collective of the
// stopped rank without them.
constexpr std::uint64_t kFirstHeartbeats = 200;
constexpr auto kHeartbeatRefresh = std::chrono::seconds(10);

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Forks of this process, counted in the child (pthread_atfork), so a MeterFile knows it is a copy.
std::atomic<unsigned> forks{0};

void count_fork() { forks.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

MeterFile::MeterFile(std::string path, int rank, int attempt, double resource_interval,
                     GpuChoice gpu, records::RecordDetail detail)
    : path_(std::move(path)), rank_(rank), attempt_(attempt), detail_(detail) {
  static std::once_flag at_fork;
  std::call_once(at_fork, [] { ::pthread_atfork(nullptr, nullptr, count_fork); });
  forks_at_open_ = forks.load(std::memory_order_relaxed);
  // Appending: a restarted run continues the same file, and every record stays a whole line.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int err = errno;
    throw Error(Error::Code::kSystem, "dtrain: meter: cannot open " + path_ + ": " +
                                          std::strerror(err) +
                                          "; expected an existing, writable run directory");
  }
  buffer_.reserve(kFlushBytes + 512);
  if (resource_interval > 0) {
    resource_interval_ = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(resource_interval));
    sampler_.emplace(std::move(gpu));
  }
  flusher_ =
      std::make_unique<std::thread>(named_thread("dtrain-records", [this] { run_flusher(); }));
}

MeterFile::~MeterFile() { close(); }

bool MeterFile::forked() const noexcept {
  return forks.load(std::memory_order_relaxed) != forks_at_open_;
}

void MeterFile::run_flusher() {
  using Clock = std::chrono::steady_clock;
  std::unique_lock lock(mutex_);
  auto next_sample = sampler_ ? sampler_->last() + resource_interval_ : Clock::time_point::max();
  while (!stop_) {
    wake_.wait_until(lock, std::min(Clock::now() + kFlushPeriod, next_sample));
    if (stop_) break;
    try {
      if (detail_ == records::RecordDetail::kIntervals) {
        // The open interval is due even while no step ends (a hang: its steps reach the file).
        if (auto due = intervals_.take_due(unix_now())) append_interval_locked(*due);
        if ((last_enter_.pending || last_exit_.pending) &&
            (Clock::now() - last_collective_ >= kQuietHeartbeats ||
             Clock::now() - heartbeats_written_ >= kHeartbeatRefresh)) {
          append_heartbeats_locked();
        }
      }
      if (Clock::now() >= next_sample) {
        lock.unlock();
        const std::string line = resource_line();
        lock.lock();
        next_sample = sampler_->last() + resource_interval_;
        if (!line.empty()) append_locked(line);
      }
      flush_locked();
    } catch (const Error&) {
      // Kept in the buffer; the next record or flush() reports it to the caller.
    }
  }
}

records::MetricRecord MeterFile::own_record(records::RecordType type) const {
  records::MetricRecord r;
  r.type = type;
  r.time = unix_now();
  r.rank = rank_;
  r.attempt = attempt_;
  return r;
}

std::string MeterFile::resource_line() noexcept {
  try {
    records::MetricRecord r = own_record(records::RecordType::kResource);
    sampler_->sample(r, std::chrono::steady_clock::now());
    r.time = unix_now();  // after the sample, which reads /proc
    return records::format_resource_record(r);
  } catch (...) {
    return "";  // no memory for the line: this sample is lost, the next one covers its time
  }
}

void MeterFile::append_locked(const std::string& line) {
  if (fd_ < 0) return;
  buffer_ += line;
  buffer_ += '\n';
  if (buffer_.size() >= kFlushBytes) flush_locked();
}

void MeterFile::step(std::int64_t step, std::int64_t samples, double seconds, double data_seconds,
                     CollectiveTime::TimePoint began, CollectiveTime::TimePoint ended) {
  if (forked()) return;
  std::lock_guard lock(mutex_);
  records::MetricRecord r = own_record(records::RecordType::kStep);
  r.step = step;
  r.samples = samples;
  r.seconds = seconds;
  r.comm_seconds = collectives_.take(began, ended);
  if (data_seconds >= 0) r.data_seconds = data_seconds;
  if (detail_ == records::RecordDetail::kSteps) {
    append_locked(records::format_step_record(r));
    return;
  }
  records::StepMeasure m{step, samples, seconds, *r.comm_seconds, r.data_seconds, r.time};
  auto added = intervals_.add(m);
  if (added.closed) append_interval_locked(*added.closed);
  if (added.full) append_locked(records::format_step_record(r));
  if (auto due = intervals_.take_due(r.time)) append_interval_locked(*due);
}

void MeterFile::append_interval_locked(const records::StepInterval& interval) {
  records::MetricRecord r = own_record(records::RecordType::kInterval);
  r.step_interval = interval;
  append_locked(records::format_interval_record(r));
}

void MeterFile::append_heartbeats_locked() {
  // In the order they were made: an exit after its enter; the enter of a later collective after
  // the exit of the one before.
  Heartbeat* first = &last_enter_;
  Heartbeat* second = &last_exit_;
  if (last_exit_.seq < last_enter_.seq) std::swap(first, second);
  for (Heartbeat* h : {first, second}) {
    if (!h->pending) continue;
    append_locked(h->line);
    h->pending = false;
  }
  heartbeats_written_ = std::chrono::steady_clock::now();
}

void MeterFile::binding(const records::RankBinding& binding) {
  if (forked()) return;
  std::lock_guard lock(mutex_);
  records::MetricRecord r = own_record(records::RecordType::kBinding);
  r.binding = binding;
  append_locked(records::format_binding_record(r));
}

void MeterFile::on_collective(std::uint64_t seq, const char* op, std::size_t bytes, bool enter,
                              bool failed) noexcept {
  if (forked()) return;
  // The allocation-free writer: this runs for every collective and must stay far below 1 % of a
  // step (the meter_overhead case of bench/coll_bench.cpp measures it).
  char line[256];
  records::format_collective_record(line, sizeof line, unix_now(), rank_, seq, op, bytes, enter,
                                    failed, attempt_);
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  try {
    if (enter) {
      collectives_.enter(now);
    } else {
      collectives_.exit(now);
    }
  } catch (...) {
    // No memory to keep the interval: it is left out of comm_seconds, the heartbeat is not.
  }
  if (detail_ == records::RecordDetail::kIntervals && seq >= kFirstHeartbeats) {
    Heartbeat& h = enter ? last_enter_ : last_exit_;
    std::memcpy(h.line, line, sizeof line);
    h.seq = seq;
    h.pending = true;
    last_collective_ = now;
    if (!failed) return;
    try {
      // A failure is written at once, with the enter before it: the evidence `dtrain logs` reads
      // if the launcher then kills the job.
      append_heartbeats_locked();
      flush_locked();
    } catch (...) {
      // A failed write stays in the buffer; flush() reports it.
    }
    return;
  }
  if (detail_ == records::RecordDetail::kIntervals) heartbeats_written_ = now;
  try {
    append_locked(line);
    // A failure is written at once too: it is the evidence `dtrain logs` reads if the launcher
    // then kills the job.
    if (failed || (enter && now - last_write_ >= kEagerGap)) flush_locked();
  } catch (...) {
    // A failed write stays in the buffer; flush() reports it.
  }
}

void MeterFile::flush() {
  if (forked()) return;
  std::lock_guard lock(mutex_);
  if (auto open = intervals_.take()) append_interval_locked(*open);
  append_heartbeats_locked();
  flush_locked();
}

void MeterFile::flush_locked() {
  if (buffer_.empty()) return;
  std::size_t done = 0;
  while (fd_ >= 0 && done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      buffer_.erase(0, done);  // keep what was not written, for a later try
      throw Error(Error::Code::kSystem,
                  "dtrain: meter: cannot write " + path_ + ": " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  buffer_.clear();
  last_write_ = std::chrono::steady_clock::now();
}

void MeterFile::close() noexcept {
  if (forked()) {
    (void)flusher_.release();  // the parent's thread: this process has none to join or destroy
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    return;
  }
  {
    std::lock_guard lock(mutex_);
    if (stop_) return;
    stop_ = true;
  }
  wake_.notify_all();
  if (flusher_ && flusher_->joinable()) flusher_->join();
  // The closing sample covers the run's end since the previous one, so that every file with
  // sampling on has at least one, whatever the run's length.
  const std::string closing = sampler_ ? resource_line() : "";
  std::lock_guard lock(mutex_);
  try {
    if (auto open = intervals_.take()) append_interval_locked(*open);
    append_heartbeats_locked();
    if (!closing.empty()) append_locked(closing);
    flush_locked();
  } catch (...) {
    // A destructor cannot throw and core code does not print: the last records are lost. A
    // caller that must know calls flush() itself first.
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace runtime

namespace {

std::string rank_file(const std::string& dir, int rank) {
  return dir + "/" + records::rank_file_name(rank, records::kMetricsExtension);
}

void check_seconds(const char* field, double v) {
  if (!std::isfinite(v) || v < 0) {
    char got[64];
    std::snprintf(got, sizeof got, "%g", v);
    throw Error(Error::Code::kInvalid, std::string("dtrain: meter: record: bad measurement; "
                                                   "expected finite ") +
                                           field + " >= 0, got " + got);
  }
}

// One past `step`, for the next step's number; INT64_MAX stays (there is no step after it).
std::int64_t step_after(std::int64_t step) {
  return step == std::numeric_limits<std::int64_t>::max() ? step : step + 1;
}

void check_samples(const char* call, std::int64_t samples) {
  if (samples < 0) {
    throw Error(Error::Code::kInvalid, std::string("dtrain: meter: ") + call +
                                           ": bad measurement; expected samples >= 0, got " +
                                           std::to_string(samples));
  }
}

}  // namespace

Meter::Meter(Context& ctx, std::string run_dir) : resumed_(ctx.comm().engine().resumed_step()) {
  if (run_dir.empty()) run_dir = ctx.comm().engine().settings().run_dir;
  if (run_dir.empty()) return;  // not in a dtrain run: disabled
  // The rank's GPU for the resource records: the launcher's CUDA_VISIBLE_DEVICES (a launch
  // variable, not a DTRAIN_* setting), as it is now that init() applied the binding.
  const launch::Environment env = launch::current_environment();
  const auto found = env.find("CUDA_VISIBLE_DEVICES");
  const char* visible = found == env.end() ? nullptr : found->second.c_str();
  file_ = std::make_shared<runtime::MeterFile>(
      rank_file(run_dir, ctx.world().rank), ctx.world().rank, ctx.world().attempt,
      ctx.comm().engine().settings().resource_interval,
      runtime::choose_rank_gpu(visible ? std::optional<std::string_view>(visible) : std::nullopt,
                               ctx.world().local_rank),
      ctx.comm().engine().settings().record_detail);
  // Where the rank runs, once, as the process has it now (after init() applied its binding): the
  // report's table of ranks shows it (docs/report.md).
  file_->binding(runtime::current_binding());
  // The engine holds the file too, so heartbeats never reach a destroyed Meter.
  ctx.comm().engine().set_observer(file_);
}

Meter::Meter(Meter&& other) noexcept = default;
Meter& Meter::operator=(Meter&& other) noexcept {
  if (this != &other) {
    if (file_) file_->close();
    file_ = std::move(other.file_);
    resumed_ = std::move(other.resumed_);
    next_step_ = other.next_step_;
    started_ = other.started_;
    data_seconds_ = other.data_seconds_;
  }
  return *this;
}

Meter::~Meter() {
  if (file_) file_->close();
}

bool Meter::enabled() const { return file_ != nullptr; }

const std::string& Meter::path() const {
  static const std::string none;
  return file_ ? file_->path() : none;
}

std::int64_t Meter::next_step() const {
  if (next_step_) return *next_step_;
  const std::int64_t resumed = resumed_ ? resumed_->step.load() : -1;
  return resumed >= 0 ? step_after(resumed) : 0;
}

void Meter::start_step() { started_ = std::chrono::steady_clock::now(); }

std::int64_t Meter::end_step(std::int64_t samples) { return end_step(samples, next_step()); }

std::int64_t Meter::end_step(std::int64_t samples, std::int64_t step) {
  const auto ended = std::chrono::steady_clock::now();
  if (!started_) {
    throw Error(Error::Code::kInvalid,
                "dtrain: meter: end_step: no step started; expected start_step() before it");
  }
  check_samples("end_step", samples);
  const auto began = *std::exchange(started_, std::nullopt);
  write(step, samples, std::chrono::duration<double>(ended - began).count(), began, ended);
  return step;
}

void Meter::record(std::int64_t step, std::int64_t samples, double seconds) {
  const auto ended = std::chrono::steady_clock::now();
  if (samples < 0 || !std::isfinite(seconds) || seconds < 0) {
    // A negative or non-finite value is a bug in the caller's timing, and JSON has no NaN.
    char got[96];
    std::snprintf(got, sizeof got, "samples=%lld seconds=%g", static_cast<long long>(samples),
                  seconds);
    throw Error(Error::Code::kInvalid,
                std::string("dtrain: meter: record: bad measurement; expected samples >= 0 and "
                            "finite seconds >= 0, got ") +
                    got);
  }
  // The step ended now and lasted `seconds`: the collectives before it belong to no step. (Capped
  // at the clock's own age: a duration past it would overflow the conversion.)
  const double since_epoch = std::chrono::duration<double>(ended.time_since_epoch()).count();
  const auto took = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::min(seconds, since_epoch)));
  write(step, samples, seconds, ended - took, ended);
}

void Meter::write(std::int64_t step, std::int64_t samples, double seconds,
                  std::chrono::steady_clock::time_point began,
                  std::chrono::steady_clock::time_point ended) {
  const double data = std::exchange(data_seconds_, -1.0);
  next_step_ = step_after(step);
  if (file_) file_->step(step, samples, seconds, data, began, ended);
}

void Meter::record(std::int64_t step, std::int64_t samples, double seconds, double data_seconds) {
  check_seconds("data_seconds", data_seconds);
  data_seconds_ = data_seconds;
  record(step, samples, seconds);
}

void Meter::add_data_seconds(double seconds) {
  check_seconds("data_seconds", seconds);
  data_seconds_ = (data_seconds_ < 0 ? 0.0 : data_seconds_) + seconds;
}

void Meter::flush() {
  if (file_) file_->flush();
}

}  // namespace dtrain
