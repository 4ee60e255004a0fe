// libdtrain's Meter (included by dtrain/dtrain.hpp, after the Context it takes): the per-rank
// throughput records a run directory holds (docs/metrics.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "dtrain/dtrain.hpp"

namespace dtrain {

// Per-rank records, one JSON object per line appended to RUN_DIR/rank-NNNNN.jsonl (NNNNN: the
// global rank; schema version 2 in docs/metrics.md): a "step" record per step, with the time this
// rank spent inside collectives of the Context's communicator during that step, and a "coll"
// heartbeat as each such collective enters and exits. Records are buffered and written by a
// background thread at least every half second (at once after a collective's enter), so the last
// heartbeats of a rank that hangs are on disk.
//
//   meter.start_step();
//   ... one step of `batch` samples: forward, backward, gradient allreduce, optimizer ...
//   meter.end_step(batch);  // step next_step(): after a resume, one past the checkpoint's step
//
// Only collectives of the Context's communicator are seen: another library's (torch.distributed,
// Horovod, NCCL called directly) count as the step's compute.
class DTRAIN_API Meter {
 public:
  // An empty run_dir means DTRAIN_RUN_DIR as init() read it; without either the meter is
  // disabled and drops records, so a code runs unchanged outside dtrain. Throws Error (kSystem)
  // naming the file when it cannot be opened; the directory must exist.
  explicit Meter(Context& ctx, std::string run_dir = "");
  Meter(Meter&& other) noexcept;
  Meter& operator=(Meter&& other) noexcept;
  Meter(const Meter&) = delete;
  Meter& operator=(const Meter&) = delete;
  ~Meter();  // flushes; a failure to write here is dropped, since a destructor cannot throw

  bool enabled() const;
  // The file written, "" when disabled.
  const std::string& path() const;

  // Times one step from start_step() to end_step(), which records it: its number is `step` when
  // given, else next_step(); returns the number recorded. The record's comm_seconds is the time
  // inside collectives between the two calls. A start_step() without its end_step() (the step
  // failed) is replaced by the next start_step(). end_step() throws Error (kInvalid) without a
  // start_step() before it, for negative samples, and (kSystem) when a write fails.
  void start_step();
  std::int64_t end_step(std::int64_t samples);
  std::int64_t end_step(std::int64_t samples, std::int64_t step);

  // The number the next step gets when none is given: one past the last step recorded; before the
  // first record, one past the step of the checkpoint that a Checkpointer of the Context loaded
  // (load_latest(), dtrain/checkpoint.hpp: save(step) after step `step`), else 0. So a restarted
  // attempt continues the numbering, and `dtrain stats` counts the redone steps once.
  std::int64_t next_step() const;

  // One training step timed by the caller: `samples` processed in `seconds` (finite, >= 0), a
  // step that ended now (its comm_seconds is the time inside collectives within the last
  // `seconds`: call it right after the step). Throws Error (kInvalid) for negative or non-finite
  // values, and (kSystem) when a write fails.
  void record(std::int64_t step, std::int64_t samples, double seconds);
  // The same, with the step's data-loading time (the record's "data_seconds").
  void record(std::int64_t step, std::int64_t samples, double seconds, double data_seconds);
  // Adds data-loading time to the next record (for loaders timed apart from the step).
  void add_data_seconds(double seconds);
  void flush();

 private:
  // Writes the record of a step that ran from `began` to `ended`.
  void write(std::int64_t step, std::int64_t samples, double seconds,
             std::chrono::steady_clock::time_point began,
             std::chrono::steady_clock::time_point ended);

  std::shared_ptr<runtime::MeterFile> file_;
  std::shared_ptr<const runtime::ResumedStep> resumed_;           // the Context's, for next_step()
  std::optional<std::int64_t> next_step_;                         // after the first record
  std::optional<std::chrono::steady_clock::time_point> started_;  // by start_step()
  double data_seconds_ = -1;  // < 0: none reported since the last record
};

}  // namespace dtrain
