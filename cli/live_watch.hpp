// The hang watch in each rank's logger (`dtrain run-rank`; the judgement is
// report/hang_watch.hpp): a thread beside the tee loop that, every second, reads its rank's live
// status page and /proc entry; publishes RUN_DIR/live/wait-NNNNNN.txt once its rank has waited
// inside one collective for report::publish_after (5 s, or DTRAIN_HANG_AFTER if shorter); reads
// the others' waits when that folder changes and a decision may need them; probes the nodes'
// links when every rank waits (link_watch.hpp); and when the decision (report/hang_decision.hpp)
// names its own rank or node, writes the verdict to its stderr (the job's output) and
// RUN_DIR/hang.log, then, with DTRAIN_ON_HANG=abort (the default), kills its rank so that the
// launcher ends the job and `restarts` can begin again; before that, it takes the stacks of its
// node's ranks (eu-stack or gdb, at most 8 s) into RUN_DIR/stacks/ for `logs --hang` and the
// report. Nothing is written while ranks only compute and communicate: the run directory sees one
// small file per rank that waits 5 s in one collective.
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
#include "report/hang_decision.hpp"

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
  struct Sample;  // what one tick saw of its rank
  void loop();
  // One period: sample(), update_own_wait(), read_waits(), judge(), act().
  void tick();
  // The straggler watch's tick, the rank's live page and /proc entry.
  Sample sample();
  // This rank's wait: published once it has waited report::publish_after, removed once it left.
  void update_own_wait(const Sample& now);
  // Every other period, the waits in RUN_DIR/live when that folder changed; whether there are
  // any to judge.
  bool read_waits(std::int64_t now_us);
  // The nodes' links probed when every rank waits; the decision (report/hang_decision.hpp).
  report::Decision judge(const Sample& now);
  // The verdict said (by the logger the decision names), the stacks taken, the rank ended.
  void act(const report::Decision& decision);
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
