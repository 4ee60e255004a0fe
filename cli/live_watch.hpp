// The hang watch in each rank's logger (`dtrain run-rank`; the judgement is
// report/hang_watch.hpp): a thread beside the tee loop that, every second, reads its rank's live
// status page and /proc entry; publishes RUN_DIR/live/wait-NNNNNN.txt once its rank has waited
// inside one collective for DTRAIN_HANG_AFTER; reads the others' waits when that folder changes;
// and when its own rank is the one they wait for, writes the verdict to its stderr (the job's
// output) and RUN_DIR/hang.log, then, with DTRAIN_ON_HANG=abort (the default), kills its rank so
// that the launcher ends the job and `restarts` can begin again; before that, it takes the stacks
// of its node's ranks (eu-stack or gdb, at most 8 s) into RUN_DIR/stacks/ for `logs --hang` and the
// report. Nothing is written while ranks only compute and communicate: the run directory sees one
// small file per rank that waits.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/run_settings.hpp"
#include "launch/launcher_env.hpp"
#include "records/live_status.hpp"

namespace dtrain::cli {

struct LiveWatchSettings {
  // nullopt: the watch is off (DTRAIN_HANG_AFTER=off).
  std::optional<std::chrono::seconds> hang_after = kDefaultHangAfter.after;
  // DTRAIN_ON_HANG: abort (end the rank it names) or wait (only say so)
  bool abort = kDefaultOnHang == OnHang::kAbort;
};

// DTRAIN_HANG_AFTER (a duration from 1 s to 24 h, or off) and DTRAIN_ON_HANG (abort or wait), read
// by common/run_settings.hpp's parsers, as the spec's hang_after: and on_hang: are; throws
// UsageError naming the variable, the value and what was expected.
LiveWatchSettings live_watch_settings(const launch::Environment& env);

class LiveWatch {
 public:
  // Starts the thread; `page` and the run directory must outlive it.
  LiveWatch(LiveWatchSettings settings, std::string run_dir, int rank, int size, std::string host,
            pid_t child, const records::LivePage& page);
  // Stops the thread and removes this rank's wait, if it published one.
  ~LiveWatch();
  LiveWatch(const LiveWatch&) = delete;
  LiveWatch& operator=(const LiveWatch&) = delete;

 private:
  void loop();
  void tick();
  // After a verdict: the stacks of this node's ranks into RUN_DIR/stacks (stack_capture.hpp).
  void take_stacks();

  LiveWatchSettings settings_;
  std::string run_dir_;
  int rank_;
  int size_;
  std::string host_;
  pid_t child_;
  const records::LivePage& page_;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  // The loop's own state (its thread only).
  struct State;
  std::unique_ptr<State> state_;
  std::thread thread_;  // last: started once everything above is set
};

}  // namespace dtrain::cli
