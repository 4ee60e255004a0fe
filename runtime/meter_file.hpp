// The shared state behind a dtrain::Meter: the open rank file, its buffer and the background
// flusher, and the collective observer that writes heartbeats. Shared between the Meter and the
// communicator's Engine (which calls on_collective from its progress thread), so neither has to
// outlive the other. Internal to libdtrain.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "collective_time.hpp"
#include "comm/engine.hpp"

namespace dtrain::runtime {

class MeterFile final : public CollectiveObserver {
 public:
  // Throws Error (kSystem) naming the file when it cannot be opened.
  MeterFile(std::string path, int rank, int attempt);
  ~MeterFile() override;

  const std::string& path() const { return path_; }
  // A step record (schema v2) of the step that ran from `began` to `ended`: its comm_seconds is
  // the time inside collectives within that interval. data_seconds < 0: not reported.
  void step(std::int64_t step, std::int64_t samples, double seconds, double data_seconds,
            CollectiveTime::TimePoint began, CollectiveTime::TimePoint ended);
  void on_collective(std::uint64_t seq, const char* op, std::size_t bytes, bool enter,
                     bool failed) noexcept override;
  // Writes the buffer; throws Error (kSystem) naming the file on failure.
  void flush();
  // Flushes, stops the flusher, closes the file; later records are dropped. Never throws.
  void close() noexcept;

 private:
  void flush_locked();
  void append_locked(const std::string& line);
  void run_flusher();

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
  std::thread flusher_;
};

}  // namespace dtrain::runtime
