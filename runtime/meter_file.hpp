// The shared state behind a dtrain::Meter: the open rank file, its buffer and the background
// flusher, the collective observer that writes heartbeats, and the resource sampler. Shared
// between the Meter and the communicator's Engine (which calls on_collective from its progress
// thread), so neither has to outlive the other. Internal to libdtrain.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "collective_time.hpp"
#include "comm/engine.hpp"
#include "records/metric_record.hpp"
#include "records/record_detail.hpp"
#include "records/step_interval.hpp"
#include "resources/resource_sampler.hpp"

namespace dtrain::runtime {

class MeterFile final : public CollectiveObserver {
 public:
  // Throws Error (kSystem) naming the file when it cannot be opened. `resource_interval` > 0:
  // a resource record every that many seconds, and one when the file closes, for `gpu`.
  // `detail` kSteps: a record per step and a heartbeat at every collective's enter and exit;
  // kIntervals: interval records (records/step_interval.hpp) and only the heartbeats a reader
  // needs (below).
  MeterFile(std::string path, int rank, int attempt, double resource_interval = 0,
            GpuChoice gpu = {}, records::RecordDetail detail = records::RecordDetail::kSteps);
  ~MeterFile() override;

  const std::string& path() const { return path_; }
  // A step record (schema v2) of the step that ran from `began` to `ended`: its comm_seconds is
  // the time inside collectives within that interval. data_seconds < 0: not reported.
  void step(std::int64_t step, std::int64_t samples, double seconds, double data_seconds,
            CollectiveTime::TimePoint began, CollectiveTime::TimePoint ended);
  void on_collective(std::uint64_t seq, const char* op, std::size_t bytes, bool enter,
                     bool failed) noexcept override;
  // A binding record (schema v2) of `binding`, written with the next flush.
  void binding(const records::RankBinding& binding);
  // Writes the open interval's record and the last heartbeats not yet written (kIntervals), and the
  // buffer; throws Error (kSystem) naming the file on failure.
  void flush();
  // Takes the closing resource sample, flushes, stops the flusher, closes the file; later records
  // are dropped. Never throws. In a child forked while the file was open, only closes its copy of
  // the descriptor (below).
  void close() noexcept;

 private:
  void flush_locked();
  void append_locked(const std::string& line);
  // kIntervals: the interval record of `interval`, and the latest heartbeats not yet written.
  void append_interval_locked(const records::StepInterval& interval);
  void append_heartbeats_locked();
  void run_flusher();
  // A resource record of the use since the previous sample; "" when it cannot be made. Called by
  // the flusher, or by close() once the flusher has stopped: never with mutex_ held, so that the
  // training thread never waits for /proc or NVML.
  std::string resource_line() noexcept;
  // A record of `type` with this rank's time, rank and attempt: what every line of the file opens
  // with.
  records::MetricRecord own_record(records::RecordType type) const;
  // True in a process forked from the one that opened the file. Its threads did not follow, its
  // mutex may have been held across the fork, and its buffer holds lines the opener writes: the
  // child writes nothing, joins nothing and locks nothing (a forked data-loader worker that
  // destroys its copy must neither hang nor write its parent's records twice).
  bool forked() const noexcept;

  std::string path_;
  int rank_;
  int attempt_;       // WorldInfo::attempt, written into every record
  std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  int fd_ = -1;
  bool stop_ = false;
  std::string buffer_;
  CollectiveTime collectives_;                        // since the last step record
  std::chrono::steady_clock::time_point last_write_;  // when flush_locked() last ran
  // The flusher also takes the resource samples: one thread per Meter (one per rank, one rank per
  // process in a job) that exists anyway, so sampling adds no thread, and none per peer.
  std::optional<ResourceSampler> sampler_;  // the flusher's alone (close() after joining it)
  std::chrono::steady_clock::duration resource_interval_{};
  unsigned forks_at_open_ = 0;
  records::RecordDetail detail_;
  records::IntervalAccumulator intervals_;  // kIntervals
  // kIntervals: after the first kFirstHeartbeats collectives (written as at kSteps), the last
  // enter and exit heartbeats, written only when they failed, when the collectives stopped for
  // kQuietHeartbeats (a hang, or a pause the readers should see: the flusher writes them), at least
  // every kHeartbeatRefresh, on flush() and at close. So the file holds the last ones and every
  // failure, and grows by at most two lines per quiet spell or refresh, not two per collective.
  struct Heartbeat {
    char line[256] = {};
    std::uint64_t seq = 0;
    bool pending = false;  // made since last written
  };
  Heartbeat last_enter_, last_exit_;
  std::chrono::steady_clock::time_point last_collective_;
  std::chrono::steady_clock::time_point heartbeats_written_;  // append_heartbeats_locked last ran
  // On the heap so that a forked child can let go of it without join() or ~thread().
  std::unique_ptr<std::thread> flusher_;
};

}  // namespace dtrain::runtime
