#include "supervisor.hpp"

#include "common/words.hpp"

#include <algorithm>

#include "records/log_line.hpp"
#include "records/rank_lines.hpp"
#include "records/run_dir_layout.hpp"

namespace dtrain::cli {
namespace {

// "attempt 2 of 3": people count from 1; DTRAIN_ATTEMPT and the records count from 0.
std::string attempt_of(const SupervisePolicy& policy, const AttemptEnd& end) {
  return "attempt " + std::to_string(end.attempt + 1) + " of " +
         std::to_string(policy.restarts + 1);
}

std::string failure_cause(const AttemptEnd& end) {
  if (!end.lost_nodes.empty()) {
    return end.lost_nodes + (end.cause.empty() ? std::string() : "; " + end.cause);
  }
  if (!end.cause.empty()) return end.cause;
  if (end.status > 128) {
    return "the launch was killed by " + records::signal_name(end.status - 128);
  }
  return "the launch exited with status " + std::to_string(end.status);
}

bool made_progress(const AttemptEnd& end) {
  if (end.new_checkpoints > 0) return true;
  return !end.run_has_checkpoints && end.seconds >= kMinProgressSeconds;
}

std::string no_progress_reason(const AttemptEnd& end) {
  if (end.run_has_checkpoints) return "it saved no checkpoint";
  // The supervisor sees only the checkpoints recorded in checkpoints.jsonl: a program that saves
  // its own must be told how to count, not that it saved none
  // (Supervisor.WithoutCheckpointsAtAllOnlyAQuickFailureEndsTheJob).
  return "it failed within " + std::to_string(static_cast<int>(kMinProgressSeconds)) +
         " s and no checkpoint was recorded by dtrain::Checkpointer (a program that saves its "
         "own records each save in $DTRAIN_RUN_DIR/" +
         std::string(records::kCheckpointsFile) + ": docs/fault-tolerance.md)";
}

}  // namespace

std::string describe_attempt_record(const records::AttemptRecord& record) {
  std::string out = "attempt " + std::to_string(record.attempt + 1) + " ";
  if (record.outcome == "restarted") return out + "failed: " + record.cause + "; restarting";
  if (record.outcome == "completed") return out + "completed";
  if (record.outcome == "stopped") return out + record.cause;
  return out + "failed: " + record.cause;
}

std::string attempt_cause(const report::FirstErrorReport& report) {
  std::string out = report::summarize_first_error(report);
  if (!report.culprit || report.culprit->evidence || report.culprit->last_lines.empty()) {
    return out;
  }
  std::string_view last = report.culprit->last_lines.back();
  if (records::parse_log_timestamp(last)) last.remove_prefix(records::kLogTimestampWidth + 1);
  if (!last.empty()) out += ": " + std::string(last);
  return out;
}

NextStep next_step(const SupervisePolicy& policy, const AttemptEnd& end,
                   const SuperviseProgress& progress) {
  NextStep next;
  SuperviseDecision decision = decide_after_attempt(policy, end);
  const bool failed = end.status != 0 && end.stop_signal == 0;
  if (policy.min_nodes > 0 && failed && !progress.asked_scheduler) {
    // A scheduler marks a dead node down only after a while (Slurm: its SlurmdTimeout), so a
    // restart first waits the backoff, then asks which nodes are lost and decides again with them.
    if (decision.restart && !end.waited) {
      next.step = SuperviseStep::kBackoff;
      next.message = "attempt " + std::to_string(end.attempt + 1) +
                     " failed; asking the scheduler (" + end.scheduler + ") in " +
                     std::to_string(policy.backoff_seconds) + " s which of its nodes are lost";
      return next;
    }
    next.step = SuperviseStep::kAskScheduler;
    return next;
  }
  if (decision.restart && !end.waited) {
    // The restart is announced now and recorded after the backoff: a job stopped during the
    // backoff has a `stopped` record, not a `restarted` one that no attempt follows.
    next.step = SuperviseStep::kBackoff;
    next.message = decision.message;
    next.announces_restart = true;
    return next;
  }
  if (progress.restart_announced && decision.restart) decision.message.clear();  // said before
  next.decision = std::move(decision);
  return next;
}

SuperviseDecision decide_after_attempt(const SupervisePolicy& policy, const AttemptEnd& end) {
  SuperviseDecision d;
  const std::string which = attempt_of(policy, end);
  if (end.stop_signal != 0) {
    // Preemption, the walltime or a cancel: the scheduler decides what comes next, never us.
    d.outcome = "stopped";
    d.cause = "stopped by " + records::signal_name(end.stop_signal);
    if (end.waited) {
      // The attempt had failed; the signal came while the next one was waited for.
      d.cause += " during the backoff after it failed: " + failure_cause(end);
    } else if (end.status == kSuperviseRequeueStatus) {
      d.cause += "; the ranks asked for a requeue";
    }
    d.message = which + " " + d.cause + "; not restarting";
    return d;
  }
  if (end.status == 0) {
    d.outcome = "completed";
    if (end.attempt > 0) d.message = which + " completed";
    return d;
  }
  d.cause = failure_cause(end);
  if (end.status == kSuperviseRequeueStatus) {
    d.outcome = "ended";
    d.cause = "the ranks asked for a requeue (exit status " +
              std::to_string(kSuperviseRequeueStatus) + ")";
    d.message = which + " ended: " + d.cause;
    return d;
  }
  if (end.attempt >= policy.restarts) {
    d.outcome = "ended";
    d.message = which + " failed: " + d.cause +
                (policy.restarts > 0 ? "; no restarts left" : std::string());
    return d;
  }
  if (policy.min_nodes > 0 && end.nodes_left < policy.min_nodes) {
    d.outcome = "ended";
    d.message = which + " failed: " + d.cause +
                "; not restarting: " + std::to_string(end.nodes_left) + " of " +
                std::to_string(policy.max_nodes) + " nodes left, fewer than the " +
                std::to_string(policy.min_nodes) +
                " the job needs (nodes: " + std::to_string(policy.min_nodes) + ".." +
                std::to_string(policy.max_nodes) + "), after " + std::to_string(end.attempt + 1) +
                (end.attempt == 0 ? " attempt" : " attempts");
    return d;
  }
  if (!made_progress(end)) {
    d.outcome = "ended";
    d.message = which + " failed: " + d.cause + "; not restarting: " + no_progress_reason(end) +
                ", so the failure would repeat";
    return d;
  }
  d.restart = true;
  d.outcome = "restarted";
  d.message = which + " failed: " + d.cause + "; restarting";
  if (!end.waited) d.message += " in " + std::to_string(policy.backoff_seconds) + " s";
  if (policy.min_nodes > 0) {
    d.message += " on " + std::to_string(end.nodes_left) + " of " +
                 std::to_string(policy.max_nodes) + " nodes";
    if (!end.excluded.empty())
      d.message += " (without " + join_alternatives(end.excluded, ", ") + ")";
  }
  return d;
}

void note_lost_nodes(ElasticNodes& nodes, const std::vector<plan::LostNode>& lost,
                     AttemptEnd& end) {
  std::vector<plan::LostNode> fresh;
  const auto has = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  for (const auto& node : lost) {
    if (!has(nodes.allocation.nodes, node.name) || has(nodes.excluded, node.name)) continue;
    nodes.excluded.push_back(node.name);
    fresh.push_back(node);
  }
  end.lost_nodes = describe_lost_nodes(fresh);
  end.excluded = nodes.excluded;
  end.nodes_left = nodes.left();
}

std::string describe_lost_nodes(const std::vector<plan::LostNode>& lost) {
  std::string out;
  for (const auto& n : lost) {
    out += (out.empty() ? "" : ", ") + std::string("node ") + n.name + " lost (" + n.state + ")";
  }
  return out;
}

}  // namespace dtrain::cli
