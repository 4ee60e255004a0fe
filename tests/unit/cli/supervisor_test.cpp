// `dtrain supervise`'s decisions after an attempt: restart after a failure that made progress,
// never after a stop signal, a requeue request, the last restart or a failure without progress,
// each with the line the user sees.
#include "supervisor.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

namespace dtrain::cli {
namespace {

const SupervisePolicy kTwoRestarts{2, 10};

AttemptEnd failed(int attempt) {
  AttemptEnd end;
  end.attempt = attempt;
  end.status = 3;
  end.seconds = 5;
  end.new_checkpoints = 1;
  end.run_has_checkpoints = true;
  end.cause = "rank 1 on node0 exited with status 3: boom";
  return end;
}

TEST(Supervisor, RestartsAFailureThatSavedACheckpoint) {
  const auto d = decide_after_attempt(kTwoRestarts, failed(0));
  EXPECT_TRUE(d.restart);
  EXPECT_EQ(d.outcome, "restarted");
  EXPECT_EQ(d.cause, "rank 1 on node0 exited with status 3: boom");
  EXPECT_EQ(
      d.message,
      "attempt 1 of 3 failed: rank 1 on node0 exited with status 3: boom; restarting in 10 s");
}

TEST(Supervisor, EndsWhenNoRestartIsLeft) {
  const auto d = decide_after_attempt(kTwoRestarts, failed(2));
  EXPECT_FALSE(d.restart);
  EXPECT_EQ(d.outcome, "ended");
  EXPECT_EQ(d.message,
            "attempt 3 of 3 failed: rank 1 on node0 exited with status 3: boom; no restarts left");
  const auto none = decide_after_attempt({0, 10}, failed(0));
  EXPECT_FALSE(none.restart);
  EXPECT_EQ(none.message, "attempt 1 of 1 failed: rank 1 on node0 exited with status 3: boom");
}

TEST(Supervisor, EndsAFailureWithoutANewCheckpoint) {
  AttemptEnd end = failed(1);
  end.new_checkpoints = 0;
  const auto d = decide_after_attempt(kTwoRestarts, end);
  EXPECT_FALSE(d.restart);
  EXPECT_EQ(d.outcome, "ended");
  EXPECT_EQ(d.message,
            "attempt 2 of 3 failed: rank 1 on node0 exited with status 3: boom; not restarting: "
            "it saved no checkpoint, so the failure would repeat");
}

TEST(Supervisor, WithoutCheckpointsAtAllOnlyAQuickFailureEndsTheJob) {
  AttemptEnd end = failed(0);
  end.new_checkpoints = 0;
  end.run_has_checkpoints = false;
  end.seconds = kMinProgressSeconds - 1;
  const auto quick = decide_after_attempt(kTwoRestarts, end);
  EXPECT_FALSE(quick.restart);
  EXPECT_EQ(quick.message,
            "attempt 1 of 3 failed: rank 1 on node0 exited with status 3: boom; not restarting: "
            "it failed within 30 s and no checkpoint was recorded by dtrain::Checkpointer (a "
            "program that saves its own records each save in $DTRAIN_RUN_DIR/checkpoints.jsonl: "
            "docs/fault-tolerance.md), so the failure would repeat");
  end.seconds = kMinProgressSeconds;
  EXPECT_TRUE(decide_after_attempt(kTwoRestarts, end).restart);
}

// nodes: 2..3: a lost node is the cause; the next attempt runs on the nodes left.
const SupervisePolicy kElastic{1, 15, 2, 3};

AttemptEnd lost_node(int nodes_left, std::vector<std::string> excluded) {
  AttemptEnd end = failed(0);
  end.cause = "rank 4 on node3 went silent";
  end.lost_nodes = "node node3 lost (DOWN)";
  end.excluded = std::move(excluded);
  end.nodes_left = nodes_left;
  end.waited = true;
  return end;
}

TEST(Supervisor, ALostNodeIsTheCauseAndTheNextAttemptRunsWithoutIt) {
  const auto d = decide_after_attempt(kElastic, lost_node(2, {"node3"}));
  EXPECT_TRUE(d.restart);
  EXPECT_EQ(d.cause, "node node3 lost (DOWN); rank 4 on node3 went silent");
  EXPECT_EQ(d.message,
            "attempt 1 of 2 failed: node node3 lost (DOWN); rank 4 on node3 went silent; "
            "restarting on 2 of 3 nodes (without node3)");
}

TEST(Supervisor, FewerNodesThanTheMinimumEndTheJobNamingThem) {
  AttemptEnd end = lost_node(1, {"node2", "node3"});
  end.lost_nodes = "node node2 lost (DOWN), node node3 lost (NOT_RESPONDING)";
  const auto d = decide_after_attempt(kElastic, end);
  EXPECT_FALSE(d.restart);
  EXPECT_EQ(d.outcome, "ended");
  EXPECT_EQ(d.message,
            "attempt 1 of 2 failed: node node2 lost (DOWN), node node3 lost (NOT_RESPONDING); "
            "rank 4 on node3 went silent; not restarting: 1 of 3 nodes left, fewer than the 2 "
            "the job needs (nodes: 2..3), after 1 attempt");
}

TEST(Supervisor, ALostNodeWithoutProgressStillEndsTheJob) {
  AttemptEnd end = lost_node(2, {"node3"});
  end.new_checkpoints = 0;
  const auto d = decide_after_attempt(kElastic, end);
  EXPECT_FALSE(d.restart);
  EXPECT_NE(d.message.find("not restarting: it saved no checkpoint"), std::string::npos)
      << d.message;
}

TEST(Supervisor, AnElasticJobWithAllItsNodesRestartsOnAllOfThem) {
  AttemptEnd end = failed(0);
  end.nodes_left = 3;
  end.waited = true;
  const auto d = decide_after_attempt(kElastic, end);
  EXPECT_TRUE(d.restart);
  EXPECT_EQ(d.message,
            "attempt 1 of 2 failed: rank 1 on node0 exited with status 3: boom; restarting on 3 "
            "of 3 nodes");
}

// The scheduler's lost nodes after each failed attempt: only the allocation's count, each once,
// and a node lost before stays excluded (and is not named again as lost in this attempt).
TEST(Supervisor, LostNodesAreTheAllocationsAndStayExcluded) {
  ElasticNodes nodes;
  nodes.allocation = {"node[1-3]", {"node1", "node2", "node3"}};
  EXPECT_EQ(nodes.left(), 3);
  AttemptEnd end = failed(0);
  note_lost_nodes(nodes, {{"node3", "DOWN"}, {"login1", "DOWN"}, {"node3", "DOWN"}}, end);
  EXPECT_EQ(end.lost_nodes, "node node3 lost (DOWN)");
  EXPECT_EQ(end.excluded, (std::vector<std::string>{"node3"}));
  EXPECT_EQ(end.nodes_left, 2);
  AttemptEnd next = failed(1);
  note_lost_nodes(nodes, {{"node3", "DOWN"}, {"node2", "NOT_RESPONDING"}}, next);
  EXPECT_EQ(next.lost_nodes, "node node2 lost (NOT_RESPONDING)");
  EXPECT_EQ(next.excluded, (std::vector<std::string>{"node3", "node2"}));
  EXPECT_EQ(next.nodes_left, 1);
  // A query that failed loses no node.
  AttemptEnd quiet = failed(2);
  note_lost_nodes(nodes, {}, quiet);
  EXPECT_EQ(quiet.lost_nodes, "");
  EXPECT_EQ(quiet.excluded, (std::vector<std::string>{"node3", "node2"}));
  EXPECT_EQ(quiet.nodes_left, 1);
  EXPECT_EQ(describe_lost_nodes({{"c5n3", "DOWN"}, {"c5n4", "NOT_RESPONDING"}, {"c5n5", "FAIL"}}),
            "node c5n3 lost (DOWN), node c5n4 lost (NOT_RESPONDING), node c5n5 lost (FAIL)");
}

TEST(Supervisor, NeverRestartsAnAttemptStoppedByASignal) {
  AttemptEnd end = failed(0);
  end.stop_signal = 10;  // SIGUSR1: the scheduler's checkpoint signal
  end.status = kSuperviseRequeueStatus;
  const auto d = decide_after_attempt(kTwoRestarts, end);
  EXPECT_FALSE(d.restart);
  EXPECT_EQ(d.outcome, "stopped");
  EXPECT_EQ(d.cause, "stopped by SIGUSR1; the ranks asked for a requeue");
  EXPECT_EQ(d.message,
            "attempt 1 of 3 stopped by SIGUSR1; the ranks asked for a requeue; not restarting");
  end.stop_signal = 15;
  end.status = 143;
  EXPECT_EQ(decide_after_attempt(kTwoRestarts, end).cause, "stopped by SIGTERM");
}

// A signal during the backoff (a cancel, Ctrl-C): the failed attempt is the last; its record
// says both, so that no reader expects an attempt after it (issue 33, item 8).
TEST(Supervisor, AStopDuringTheBackoffEndsTheJobWithTheFailure) {
  AttemptEnd end = failed(0);
  end.waited = true;
  end.stop_signal = 15;
  const auto d = decide_after_attempt(kTwoRestarts, end);
  EXPECT_FALSE(d.restart);
  EXPECT_EQ(d.outcome, "stopped");
  EXPECT_EQ(d.cause,
            "stopped by SIGTERM during the backoff after it failed: rank 1 on node0 exited with "
            "status 3: boom");
  EXPECT_EQ(d.message,
            "attempt 1 of 3 stopped by SIGTERM during the backoff after it failed: rank 1 on "
            "node0 exited with status 3: boom; not restarting");
  // An elastic job waits before it decides: the same.
  AttemptEnd elastic = lost_node(2, {"node3"});
  elastic.stop_signal = 2;
  const auto e = decide_after_attempt(kElastic, elastic);
  EXPECT_FALSE(e.restart);
  EXPECT_EQ(e.cause,
            "stopped by SIGINT during the backoff after it failed: node node3 lost (DOWN); rank 4 "
            "on node3 went silent");
}

TEST(Supervisor, LeavesARequeueRequestToTheScript) {
  AttemptEnd end = failed(0);
  end.status = kSuperviseRequeueStatus;
  const auto d = decide_after_attempt(kTwoRestarts, end);
  EXPECT_FALSE(d.restart);
  EXPECT_EQ(d.cause, "the ranks asked for a requeue (exit status 85)");
}

TEST(Supervisor, CompletionIsQuietOnTheFirstAttempt) {
  AttemptEnd end;
  const auto first = decide_after_attempt(kTwoRestarts, end);
  EXPECT_FALSE(first.restart);
  EXPECT_EQ(first.outcome, "completed");
  EXPECT_EQ(first.message, "");
  end.attempt = 1;
  EXPECT_EQ(decide_after_attempt(kTwoRestarts, end).message, "attempt 2 of 3 completed");
}

TEST(Supervisor, NamesTheLaunchWhenNoRankIsToBlame) {
  AttemptEnd end = failed(0);
  end.cause.clear();
  end.status = 137;
  EXPECT_EQ(decide_after_attempt(kTwoRestarts, end).cause, "the launch was killed by SIGKILL");
  end.status = 1;
  EXPECT_EQ(decide_after_attempt(kTwoRestarts, end).cause, "the launch exited with status 1");
}

}  // namespace
}  // namespace dtrain::cli

namespace dtrain::cli {
namespace {

report::FirstErrorReport culprit_report(std::vector<std::string> last_lines, bool evidence) {
  report::FirstErrorReport r;
  r.ranks = 2;
  report::RankEnd c;
  c.rank = 1;
  c.host = "node0";
  c.kind = report::RankEnd::Kind::kFailed;
  c.how = "exited with status 1";
  if (evidence) c.evidence = report::TimedLine{0, "ValueError: boom"};
  c.last_lines = std::move(last_lines);
  r.culprit = c;
  return r;
}

// The program's own words reach the restart line even when they do not say "error".
TEST(Supervisor, TheCauseQuotesTheCulpritsLastLineWhenNoErrorLineWasFound) {
  EXPECT_EQ(attempt_cause(culprit_report({"2026-11-26T02:00:00.000000Z step 3",
                                          "2026-11-26T02:00:01.000000Z data: no such file"},
                                         false)),
            "rank 1 on node0 exited with status 1: data: no such file");
  EXPECT_EQ(attempt_cause(culprit_report({"2026-11-26T02:00:01.000000Z x"}, true)),
            "rank 1 on node0 exited with status 1: ValueError: boom");
  EXPECT_EQ(attempt_cause(culprit_report({}, false)), "rank 1 on node0 exited with status 1");
  EXPECT_EQ(attempt_cause(report::FirstErrorReport{}), "");
}

}  // namespace
}  // namespace dtrain::cli

namespace dtrain::cli {
namespace {

// `dtrain submit --wait` on a batch site: one line per attempt record as it appears.
TEST(Supervisor, AttemptRecordsAreDescribedForSubmitWait) {
  records::AttemptRecord r;
  r.attempt = 0;
  r.outcome = "restarted";
  r.cause = "rank 1 on n exited with status 3: boom";
  EXPECT_EQ(describe_attempt_record(r),
            "attempt 1 failed: rank 1 on n exited with status 3: boom; restarting");
  r.outcome = "ended";
  EXPECT_EQ(describe_attempt_record(r), "attempt 1 failed: rank 1 on n exited with status 3: boom");
  r.outcome = "stopped";
  r.cause = "stopped by SIGTERM";
  EXPECT_EQ(describe_attempt_record(r), "attempt 1 stopped by SIGTERM");
  r.attempt = 1;
  r.outcome = "completed";
  r.cause = "";
  EXPECT_EQ(describe_attempt_record(r), "attempt 2 completed");
}

// The steps after an attempt (next_step), as cmd_supervise.cpp carries them out: `wait` is what
// the backoff brings (the signal that came during it, 0 for none), `lost` what the scheduler
// answers. Returns the steps taken, in order, and the decision recorded.
struct Sequence {
  std::vector<std::string> said;  // the lines of the backoff steps, then the decision's
  std::vector<SuperviseStep> steps;
  SuperviseDecision decision;
};

Sequence run_steps(const SupervisePolicy& policy, AttemptEnd end, int wait_signal,
                   int lost_nodes_left = -1) {
  Sequence seq;
  SuperviseProgress progress;
  for (int guard = 0; guard < 10; ++guard) {
    NextStep next = next_step(policy, end, progress);
    seq.steps.push_back(next.step);
    if (next.step == SuperviseStep::kRecord) {
      seq.decision = next.decision;
      if (!next.decision.message.empty()) seq.said.push_back(next.decision.message);
      return seq;
    }
    if (next.step == SuperviseStep::kBackoff) {
      seq.said.push_back(next.message);
      end.waited = true;
      end.stop_signal = wait_signal;
      progress.restart_announced = next.announces_restart;
    } else {
      if (lost_nodes_left >= 0) {
        end.lost_nodes = "node node3 lost (DOWN)";
        end.excluded = {"node3"};
        end.nodes_left = lost_nodes_left;
      }
      progress.asked_scheduler = true;
    }
  }
  ADD_FAILURE() << "next_step never said to record";
  return seq;
}

using Step = SuperviseStep;

TEST(SuperviseSteps, ARestartIsAnnouncedThenWaitedThenRecordedSilently) {
  const Sequence seq = run_steps(kTwoRestarts, failed(0), 0);
  EXPECT_EQ(seq.steps, (std::vector<Step>{Step::kBackoff, Step::kRecord}));
  EXPECT_EQ(seq.said, (std::vector<std::string>{
                          "attempt 1 of 3 failed: rank 1 on node0 exited with status 3: boom; "
                          "restarting in 10 s"}));
  EXPECT_TRUE(seq.decision.restart);
  EXPECT_EQ(seq.decision.outcome, "restarted");
}

TEST(SuperviseSteps, ASignalDuringTheBackoffRecordsAStopAndSaysIt) {
  const Sequence seq = run_steps(kTwoRestarts, failed(0), SIGTERM);
  EXPECT_EQ(seq.steps, (std::vector<Step>{Step::kBackoff, Step::kRecord}));
  ASSERT_EQ(seq.said.size(), 2u);
  EXPECT_EQ(seq.said[1],
            "attempt 1 of 3 stopped by SIGTERM during the backoff after it failed: rank 1 on "
            "node0 exited with status 3: boom; not restarting");
  EXPECT_FALSE(seq.decision.restart);
  EXPECT_EQ(seq.decision.outcome, "stopped");
}

TEST(SuperviseSteps, AnEndThatNeedsNoRestartIsRecordedAtOnce) {
  AttemptEnd done = failed(0);
  done.status = 0;
  EXPECT_EQ(run_steps(kTwoRestarts, done, 0).steps, (std::vector<Step>{Step::kRecord}));
  EXPECT_EQ(run_steps(kTwoRestarts, failed(2), 0).steps, (std::vector<Step>{Step::kRecord}));
}

TEST(SuperviseSteps, AnElasticJobWaitsThenAsksTheSchedulerThenRestartsWithoutTheLostNode) {
  const SupervisePolicy policy = kElastic;
  AttemptEnd end = failed(0);
  end.nodes_left = 3;
  end.scheduler = "slurm";
  const Sequence seq = run_steps(policy, end, 0, 2);
  EXPECT_EQ(seq.steps, (std::vector<Step>{Step::kBackoff, Step::kAskScheduler, Step::kRecord}));
  ASSERT_EQ(seq.said.size(), 2u);
  EXPECT_EQ(seq.said[0],
            "attempt 1 failed; asking the scheduler (slurm) in 15 s which of its "
            "nodes are lost");
  EXPECT_EQ(seq.said[1],
            "attempt 1 of 2 failed: node node3 lost (DOWN); rank 1 on node0 exited with status 3: "
            "boom; restarting on 2 of 3 nodes (without node3)");
  EXPECT_TRUE(seq.decision.restart);
}

TEST(SuperviseSteps, AnElasticJobStoppedDuringTheWaitAsksNothing) {
  const SupervisePolicy policy = kElastic;
  AttemptEnd end = failed(0);
  end.nodes_left = 3;
  end.scheduler = "slurm";
  const Sequence seq = run_steps(policy, end, SIGTERM, 2);
  EXPECT_EQ(seq.steps, (std::vector<Step>{Step::kBackoff, Step::kRecord}));
  EXPECT_EQ(seq.decision.outcome, "stopped");
}

TEST(SuperviseSteps, AnElasticFailureWithNoRestartLeftStillAsksWhichNodesWereLost) {
  const SupervisePolicy policy = kElastic;
  AttemptEnd end = failed(1);
  end.nodes_left = 3;
  end.scheduler = "slurm";
  const Sequence seq = run_steps(policy, end, 0, 2);
  EXPECT_EQ(seq.steps, (std::vector<Step>{Step::kAskScheduler, Step::kRecord}));
  EXPECT_FALSE(seq.decision.restart);
  EXPECT_EQ(seq.decision.cause,
            "node node3 lost (DOWN); rank 1 on node0 exited with status 3: boom");
}

}  // namespace
}  // namespace dtrain::cli
