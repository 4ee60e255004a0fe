// `dtrain supervise`'s decisions, pure (docs/fault-tolerance.md): after each attempt of a job's
// launch, whether to start another, and what to tell the user. cmd_supervise.cpp does the
// processes, signals, clock and files; everything it decides is here, so each rule is one test.
#pragma once

#include <string>
#include <vector>

#include "dtrain/preemption.hpp"
#include "plan/schedulers/scheduler.hpp"
#include "records/attempt_record.hpp"
#include "report/first_error.hpp"

namespace dtrain::cli {

// The status with which a checkpointed training code asks to be requeued: libdtrain's own
// constant (a header-only value; nothing of libdtrain is linked for it).
inline constexpr int kSuperviseRequeueStatus = kExitRequeue;

// An attempt that ran at least this long counts as progress in a run that never recorded a
// checkpoint (its program saves without dtrain's Checkpointer, or not at all).
inline constexpr double kMinProgressSeconds = 30.0;

struct SupervisePolicy {
  int restarts = 0;         // attempts after the first one, at most
  int backoff_seconds = 0;  // the pause between a failed attempt and the next
  int min_nodes = 0;        // the elastic range's MIN; 0 when the job is not elastic
  int max_nodes = 0;        // the nodes the job started with, when elastic
};

struct AttemptEnd {
  int attempt = 0;                   // 0-based
  int status = 0;                    // the launch's exit status (128 + N when killed by signal N)
  int stop_signal = 0;               // a signal the supervisor received and forwarded, 0 when none
  double seconds = 0;                // how long the attempt ran
  int new_checkpoints = 0;           // durable checkpoints saved during the attempt
  bool run_has_checkpoints = false;  // the run recorded a checkpoint, in this attempt or before
  std::string cause;  // the first failure, "rank 1 on node0 exited with status 3: ..."
  // Elastic jobs only: the nodes lost in this attempt ("node node2 lost (DOWN)",
  // describe_lost_nodes), and those left for the next.
  std::string lost_nodes;
  std::vector<std::string> excluded;  // every node lost so far, the next attempt runs without
  int nodes_left = 0;
  std::string scheduler;  // the scheduler asked which nodes are lost ("slurm")
  // The caller already waited the backoff after this failed attempt; a stop_signal then came
  // during the wait, and the record says that the attempt failed before it.
  bool waited = false;
};

struct SuperviseDecision {
  bool restart = false;
  std::string outcome;  // the attempt record's: "completed", "restarted", "ended", "stopped"
  std::string cause;    // the attempt record's cause
  std::string message;  // one line for the user (without "dtrain: "), "" when there is none
};

SuperviseDecision decide_after_attempt(const SupervisePolicy& policy, const AttemptEnd& end);

// What the supervisor does after an attempt ended, one step at a time, until it records the
// attempt: next_step says the step, cmd_supervise.cpp carries it out (the clock, the signals, the
// scheduler's query), updates the AttemptEnd and SuperviseProgress with what happened, and asks
// again. The order of the waits and the query is decided here, so each sequence is one test.
enum class SuperviseStep {
  kRecord,        // done: record `decision`, say its message, restart or not
  kBackoff,       // say `message`, wait the backoff (a job signal ends the wait), set end.waited
                  // and end.stop_signal
  kAskScheduler,  // elastic: ask which nodes are lost (note_lost_nodes into end)
};

struct SuperviseProgress {
  bool asked_scheduler = false;    // the lost nodes were asked for after this attempt
  bool restart_announced = false;  // a kBackoff step said the restart's message already
};

struct NextStep {
  SuperviseStep step = SuperviseStep::kRecord;
  SuperviseDecision decision;      // kRecord's
  std::string message;             // kBackoff's line for the user (without "dtrain: ")
  bool announces_restart = false;  // kBackoff's message is the restart's (set restart_announced)
};

NextStep next_step(const SupervisePolicy& policy, const AttemptEnd& end,
                   const SuperviseProgress& progress);

// An elastic job's nodes across attempts (--min-nodes): the allocation's, and those lost so far.
// The scheduler's adapter (plan/schedulers/scheduler.hpp) says which nodes the allocation has and
// which are lost; what follows from its answers is decided here.
struct ElasticNodes {
  plan::Allocation allocation;
  std::vector<std::string> excluded;  // lost so far, in the order they were found; never back
  int left() const { return static_cast<int>(allocation.nodes.size() - excluded.size()); }
};

// After a failed attempt, the scheduler's lost nodes (`lost`: parse_lost_nodes): those of the
// allocation not excluded yet join `nodes.excluded`, and `end` gets the newly lost ones
// described, every excluded node and the nodes left. A node outside the allocation is not ours.
void note_lost_nodes(ElasticNodes& nodes, const std::vector<plan::LostNode>& lost, AttemptEnd& end);

// "node node2 lost (DOWN)", "node node2 lost (DOWN), node node3 lost (NOT_RESPONDING)".
std::string describe_lost_nodes(const std::vector<plan::LostNode>& lost);

// What `dtrain submit --wait` prints for an attempt record that appeared while it followed a
// batch job: "attempt 1 failed: CAUSE; restarted", "attempt 2 completed", ...
std::string describe_attempt_record(const records::AttemptRecord& record);

// AttemptEnd::cause from the attempt's first-error report: `dtrain submit`'s one-line summary,
// with the culprit's last line of output when the summary quotes no error line (a program whose
// message has no "error" in it), so the user reads the program's own words; "" when no rank
// failed.
std::string attempt_cause(const report::FirstErrorReport& report);

}  // namespace dtrain::cli
