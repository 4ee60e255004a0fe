// `dtrain supervise [--restarts N] [--backoff S] -- LAUNCH...`: what a job script runs instead of
// its launch (mpirun, srun) when the spec asks for `restarts` (docs/fault-tolerance.md). It runs
// LAUNCH once per attempt with DTRAIN_ATTEMPT=k exported, forwards the scheduler's and the user's
// signals to it, appends one record per attempt to RUN_DIR/attempts.jsonl and, after a failure
// that made progress, starts the next attempt; supervisor.cpp decides (pure), this file does the
// processes, the clock and the files. It exits with the last attempt's status.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "common/child_process.hpp"
#include "common/errors.hpp"
#include "common/signal_forwarding.hpp"
#include "common/words.hpp"
#include "flag_values.hpp"
#include "launch/launcher_env.hpp"
#include "plan/job_spec.hpp"
#include "planning.hpp"
#include "process.hpp"
#include "records/log_line.hpp"
#include "records/rank_files.hpp"
#include "report/first_error.hpp"
#include "run_dir.hpp"
#include "supervisor.hpp"

namespace dtrain::cli {
namespace {

struct SuperviseOptions {
  std::string run_dir;
  int restarts = 0;
  int backoff = 10;
  int min_nodes = 0;
  std::vector<std::string> command;
};

// An elastic job (--min-nodes): its scheduler, which knows the allocation and the lost nodes and
// rewrites the launch, and its nodes so far.
struct Elastic {
  const plan::SchedulerAdapter* scheduler = nullptr;
  ElasticNodes nodes;
};

// Runs one attempt of the launch and returns its exit status. `unset`: variables the launch must
// not inherit (those of a shrunk launch, the scheduler's shrunk_launch_unset). The job's signals
// that reach the supervisor go to the running attempt (`signals`), and each ends the supervision:
// no attempt starts after one.
int run_attempt(SignalForwarding& signals, const std::vector<std::string>& command, int attempt,
                const std::vector<std::string>& unset) {
  SpawnOptions options;
  // The launch dies with the supervisor: the walltime's KILL (`timeout --foreground` on the local
  // site) or a kill -9 reaches only the supervisor, and must not leave its launch running.
  options.dies_with_parent = true;
  options.set = {{"DTRAIN_ATTEMPT", std::to_string(attempt)}};
  options.unset = unset;
  SpawnedEnd end;
  try {
    end = spawn_forwarding(signals, command, options, "dtrain: supervise");
  } catch (const std::runtime_error& e) {
    throw Failure(e.what());
  }
  if (end.exec_error != 0) {
    std::fprintf(stderr, "dtrain: supervise: cannot run %s: %s\n", command[0].c_str(),
                 std::strerror(end.exec_error));
  }
  return exit_code_of(end.wait_status);
}

// The first failure of the attempt's logs (only the last attempt of each rank log counts), as
// `dtrain submit` prints it; "" when the logs name none.
std::string first_failure(const std::string& run_dir) {
  try {
    const auto logs = list_rank_files(run_dir, records::kLogExtension);
    if (logs.empty()) return "";
    return attempt_cause(read_first_error(run_dir, logs));
  } catch (const std::exception&) {
    return "";  // logs the launch did not write are no reason to stop supervising
  }
}

// The launcher can end a rank, logger and all, before it hears which rank was lost (Open MPI's
// abort has Slurm end the whole step within milliseconds): its log gets the line another rank
// wrote, now, before the next attempt's lines follow it.
void note_lost_rank(const std::string& run_dir, int attempt) {
  try {
    append_lost_rank_notes(run_dir, attempt, "dtrain supervise");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtrain: supervise: warning: %s\n", e.what());
  }
}

void describe_ranks(const std::string& run_dir, records::AttemptRecord& record) {
  try {
    // The ranks and hosts of this attempt's start lines: the logs hold every attempt's.
    const auto ranks = read_attempt_hosts(run_dir, record.attempt);
    record.ranks = static_cast<int>(ranks.size());
    std::set<std::string> hosts;
    for (const auto& [rank, host] : ranks) hosts.insert(host);
    record.nodes.assign(hosts.begin(), hosts.end());
  } catch (const std::exception&) {
  }
}

std::size_t checkpoint_count(const std::string& run_dir) {
  try {
    return read_checkpoint_records(run_dir).size();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtrain: supervise: warning: %s\n", e.what());
    return 0;
  }
}

// The scheduler the job was planned for, and its allocation's nodes from the environment.
Elastic elastic_job(const std::string& run_dir) {
  Elastic job;
  job.scheduler = &planned_scheduler(run_dir);
  if (!job.scheduler->can_shrink()) {
    std::vector<std::string> can;
    for (const auto& name : plan::scheduler_names()) {
      if (plan::scheduler_adapter(name)->can_shrink()) can.push_back(name);
    }
    throw InputError("dtrain: supervise: --min-nodes: the job's scheduler, " +
                     std::string(job.scheduler->name()) + " (its run directory's job.yaml), " +
                     "cannot run a job on fewer nodes; expected a job of " +
                     join_alternatives(can));
  }
  job.nodes.allocation = job.scheduler->allocation(launch::current_environment());
  return job;
}

// Asks the scheduler which of the allocation's nodes are lost; the new ones join the excluded
// and `end` says what the next attempt has. A query that fails loses no node (and says so).
void find_lost_nodes(Elastic& job, AttemptEnd& end) {
  std::vector<plan::LostNode> lost;
  try {
    const Captured c = run_capturing(job.scheduler->lost_nodes_command(job.nodes.allocation));
    if (c.status != 0) {
      std::fprintf(stderr, "dtrain: supervise: warning: cannot tell which nodes are lost: %s",
                   c.err.c_str());
    }
    lost = job.scheduler->parse_lost_nodes(c.out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtrain: supervise: warning: cannot tell which nodes are lost: %s\n",
                 e.what());
  }
  note_lost_nodes(job.nodes, lost, end);
}

// Sleeps `seconds`, waking early when a job signal arrives.
void backoff(int seconds, const SignalForwarding& signals) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (signals.last_signal() == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// One line of the supervisor's on stderr, at once ("" prints nothing).
void say(const std::string& message) {
  if (!message.empty()) std::fprintf(stderr, "dtrain: %s\n", message.c_str());
  std::fflush(stderr);
}

// The end of one attempt, as decide_after_attempt reads it.
AttemptEnd attempt_end(const SuperviseOptions& opts, const records::AttemptRecord& record,
                       double seconds, std::size_t checkpoints_after,
                       const SignalForwarding& signals) {
  AttemptEnd end;
  end.attempt = record.attempt;
  end.status = record.status;
  end.stop_signal = signals.last_signal();
  end.seconds = seconds;
  end.new_checkpoints = record.checkpoints;
  end.run_has_checkpoints = checkpoints_after > 0;
  if (record.status != 0 && end.stop_signal == 0) end.cause = first_failure(opts.run_dir);
  return end;
}

// After the attempt: next_step's steps (supervisor.hpp) carried out until it says what to record.
SuperviseDecision decide(const SupervisePolicy& policy, Elastic& job, AttemptEnd& end,
                         const SignalForwarding& signals) {
  end.excluded = job.nodes.excluded;
  end.nodes_left = job.nodes.left();
  if (job.scheduler != nullptr) end.scheduler = std::string(job.scheduler->name());
  SuperviseProgress progress;
  for (;;) {
    NextStep next = next_step(policy, end, progress);
    switch (next.step) {
      case SuperviseStep::kRecord:
        return std::move(next.decision);
      case SuperviseStep::kBackoff:
        say(next.message);
        backoff(policy.backoff_seconds, signals);
        end.waited = true;
        end.stop_signal = signals.last_signal();
        progress.restart_announced = next.announces_restart;
        break;
      case SuperviseStep::kAskScheduler:
        find_lost_nodes(job, end);
        progress.asked_scheduler = true;
        break;
    }
  }
}

int supervise(const SuperviseOptions& opts) {
  SignalForwarding signals;
  SupervisePolicy policy{opts.restarts, opts.backoff};
  Elastic elastic;
  if (opts.min_nodes > 0) {
    elastic = elastic_job(opts.run_dir);
    policy.min_nodes = opts.min_nodes;
    policy.max_nodes = static_cast<int>(elastic.nodes.allocation.nodes.size());
  }
  const auto& excluded = elastic.nodes.excluded;
  std::vector<std::string> launch = opts.command;
  for (int attempt = 0;; ++attempt) {
    const std::size_t checkpoints_before = checkpoint_count(opts.run_dir);
    records::AttemptRecord record;
    record.attempt = attempt;
    record.start = records::format_log_time(std::chrono::system_clock::now());
    const auto started = std::chrono::steady_clock::now();
    record.status = run_attempt(
        signals, launch, attempt,
        excluded.empty() ? std::vector<std::string>() : elastic.scheduler->shrunk_launch_unset());
    // Not every launcher passes the ranks' requeue status on (MPICH's mpiexec may exit 0 after
    // every rank exited 85): their own exit lines decide (report/requeue_request.hpp).
    if (const report::LaunchStatus decided = read_launch_status(opts.run_dir, record.status);
        !decided.note.empty()) {
      say(decided.note);
      record.status = decided.status;
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    record.end = records::format_log_time(std::chrono::system_clock::now());
    if (record.status != 0 && signals.last_signal() == 0) note_lost_rank(opts.run_dir, attempt);
    const std::size_t checkpoints_after = checkpoint_count(opts.run_dir);
    record.checkpoints =
        static_cast<int>(checkpoints_after - std::min(checkpoints_before, checkpoints_after));
    describe_ranks(opts.run_dir, record);

    AttemptEnd end = attempt_end(opts, record, took.count(), checkpoints_after, signals);
    const SuperviseDecision decision = decide(policy, elastic, end, signals);
    record.outcome = decision.outcome;
    record.cause = decision.cause;
    try {
      append_attempt_record(opts.run_dir, record);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dtrain: supervise: warning: %s\n", e.what());
    }
    say(decision.message);
    if (!decision.restart) return record.status;
    if (!excluded.empty()) {
      launch = elastic.scheduler->shrink_launch(opts.command, end.nodes_left, excluded);
    }
  }
}

}  // namespace

void register_supervise(CLI::App& app, Action& action) {
  auto opts = std::make_shared<SuperviseOptions>();
  auto* cmd = app.add_subcommand(
      "supervise",
      "Run a job's launch, restarting it after failures (used by job scripts with `restarts`)");
  // Listed: a user meets it in every job script with `restarts` and may run it by hand.
  cmd->add_option("--run-dir", opts->run_dir, "Run directory (attempts.jsonl goes there)")
      ->envname("DTRAIN_RUN_DIR")
      ->required();
  // dtrain's own number parser: CLI::Range said "--restarts: Value a not in range 0 to 1000".
  add_whole_number_flag(*cmd, "--restarts", opts->restarts, 0, plan::kMaxRestarts,
                        "Attempts after the first, at most");
  add_whole_number_flag(*cmd, "--backoff", opts->backoff, 0, 86400,
                        "Seconds between a failed attempt and the next");
  add_whole_number_flag(*cmd, "--min-nodes", opts->min_nodes, 1, 100000,
                        "Elastic range's MIN: restart without lost nodes while this many are up");
  cmd->add_option("command", opts->command, "The launch command and its arguments, after --")
      ->required();
  cmd->callback([opts, &action] { action = [opts] { return supervise(*opts); }; });
}

}  // namespace dtrain::cli
