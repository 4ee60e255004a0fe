#include "batch_job.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/errors.hpp"
#include "common/words.hpp"
#include "plan/schedulers/scheduler.hpp"
#include "process.hpp"
#include "records/rank_files.hpp"
#include "report/plain_number.hpp"
#include "run_dir.hpp"
#include "step_rate.hpp"
#include "supervisor.hpp"

namespace dtrain::cli {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kJobIdPlaceholder = "<job id>";

std::string command_line(const plan::Argv& argv) {
  std::string out;
  for (const auto& w : argv) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string output_of(const Captured& c) {
  std::string text = c.err;
  if (!c.out.empty()) text += (text.empty() || text.back() == '\n' ? "" : "\n") + c.out;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.empty() ? "(no output)" : text;
}

[[noreturn]] void fail(const plan::Argv& argv, const Captured& c, const std::string& extra = "") {
  throw plan::SubmitError("dtrain: `" + command_line(argv) + "` exited with status " +
                          std::to_string(c.status) + extra + ":\n" + output_of(c));
}

Captured run_scheduler_command(const plan::SchedulerAdapter& s, const plan::Argv& argv) {
  Captured c = run_capturing(argv);
  if (c.status == 127) {
    throw UsageError("dtrain: " + argv[0] + " not found on PATH; expected to submit from a " +
                     std::string(s.name()) + " login node (or choose another site with --site)");
  }
  return c;
}

// Cancels a job whose submission could not be completed, so no held job is left behind.
void cancel_quietly(const plan::SchedulerAdapter& s, const std::string& job_id) {
  try {
    run_capturing(s.cancel_command(job_id));
  } catch (const std::exception&) {
  }
}

std::string unique_staging_dir(const std::string& prefix) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return prefix + "submitting-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
}

std::string format_elapsed(std::chrono::seconds s) {
  const auto total = s.count();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(total / 3600),
                static_cast<long long>(total / 60 % 60), static_cast<long long>(total % 60));
  return buf;
}

}  // namespace

SubmittedJob submit_batch(PlannedJob& job) {
  plan::LaunchPlan& plan = job.plan;
  const plan::SchedulerAdapter& scheduler = job.scheduler();
  // The directory is named after the job id, known only once submitted: stage it under a
  // temporary name and rename it while the job is held.
  const bool named_after_job = plan.run_dir.ends_with(kJobIdPlaceholder);
  const std::string prefix = plan.run_dir.substr(
      0, plan.run_dir.size() - (named_after_job ? kJobIdPlaceholder.size() : 0));
  if (named_after_job) {
    const fs::path parent = fs::path(prefix).parent_path();
    plan.run_dir = (parent / ("." + fs::path(prefix).filename().string())).string();
    plan.run_dir = unique_staging_dir(plan.run_dir);
  }
  write_run_dir(plan, job.spec_text);
  const std::string script = plan.run_dir + "/" + plan.script_name;

  const plan::Argv submit = scheduler.submit_held_command(script);
  Captured submitted;
  try {
    submitted = run_scheduler_command(scheduler, submit);
  } catch (...) {
    if (named_after_job) fs::remove_all(plan.run_dir);
    throw;
  }
  if (submitted.status != 0) {
    if (named_after_job) fs::remove_all(plan.run_dir);
    fail(submit, submitted);
  }
  std::string job_id;
  try {
    job_id = scheduler.parse_submitted(submitted.out);
  } catch (const plan::SubmitError& e) {
    if (named_after_job) fs::remove_all(plan.run_dir);
    throw plan::SubmitError("dtrain: `" + command_line(submit) + "`: " + e.what());
  }

  SubmittedJob result{&scheduler, job_id, plan.run_dir};
  try {
    if (named_after_job) {
      result.run_dir = prefix + plan::job_number(job_id);
      std::error_code ec;
      if (fs::exists(result.run_dir, ec)) {
        throw plan::SubmitError("dtrain: run directory " + result.run_dir +
                                " already exists; expected a new directory for job " + job_id);
      }
      fs::rename(plan.run_dir, result.run_dir, ec);
      if (ec) {
        throw plan::SubmitError("dtrain: cannot rename " + plan.run_dir + " to " + result.run_dir +
                                ": " + ec.message());
      }
      plan.run_dir = result.run_dir;
    }
    plan.job_id = plan::job_number(job_id);
    write_plan_json(plan);
    const plan::Argv release = scheduler.release_command(job_id);
    const Captured released = run_scheduler_command(scheduler, release);
    if (released.status != 0) fail(release, released, " (job " + job_id + " was cancelled)");
  } catch (...) {
    cancel_quietly(scheduler, job_id);
    throw;
  }
  return result;
}

namespace {

// Names the nodes a job lost, as the scheduler sees them now: the one fact a user needs first
// (and the one Slurm's "NODE_FAIL" leaves out).
void report_failed_nodes(const SubmittedJob& job, const plan::JobStatus& status) {
  std::string names;
  const plan::Argv query = job.scheduler->failed_nodes_command(status.nodes);
  if (!query.empty()) {
    const Captured c = run_capturing(query);
    names = join_alternatives(job.scheduler->parse_failed_nodes(c.out), ", ");
  }
  std::fprintf(stderr, "dtrain: job %s ended because a node failed: %s; its ranks there are lost\n",
               job.job_id.c_str(),
               names.empty()
                   ? ("one of " + status.nodes + " (the scheduler no longer says which)").c_str()
                   : names.c_str());
}

}  // namespace

namespace {

// A job with `restarts`: one line per attempt its supervisor recorded since the last poll
// (attempts.jsonl), so restarts are reported as they happen (docs/fault-tolerance.md).
void report_new_attempts(const SubmittedJob& job, bool tty, std::size_t& seen) {
  std::vector<records::AttemptRecord> attempts;
  try {
    attempts = read_attempt_records(job.run_dir);
  } catch (const std::exception&) {
    return;  // a line being written; the next poll reads it whole
  }
  for (; seen < attempts.size(); ++seen) {
    std::fprintf(stderr, "%sdtrain: job %s: %s\n", tty ? "\r\033[K" : "", job.job_id.c_str(),
                 describe_attempt_record(attempts[seen]).c_str());
  }
}

}  // namespace

BatchEnd wait_for_batch(const SubmittedJob& job) {
  using Clock = std::chrono::steady_clock;
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const plan::Argv query = job.scheduler->status_command(job.job_id);
  StepRate rate(job.run_dir + "/" + records::rank_file_name(0, records::kMetricsExtension));
  std::string last_state;
  std::optional<Clock::time_point> running_since;
  int failures = 0;
  std::size_t attempts_seen = 0;
  while (true) {
    const Captured c = run_capturing(query);
    const auto status = job.scheduler->parse_status(c.out);
    if (!status) {
      // The scheduler forgot the job (it ended a while ago), or the query itself failed.
      const bool unknown = job.scheduler->forgot_job(c.out + c.err, c.status);
      if (!unknown && ++failures < 10) {
        std::this_thread::sleep_for(std::chrono::seconds(2));
        continue;
      }
      if (!unknown) fail(query, c, " ten times in a row while waiting for job " + job.job_id);
      if (tty) std::fputs("\n", stderr);
      report_new_attempts(job, false, attempts_seen);
      if (auto from_file = read_exit_status(job.run_dir)) return {*from_file};
      std::fprintf(stderr,
                   "dtrain: job %s ended, but neither the scheduler nor %s/%s says with what "
                   "status\n",
                   job.job_id.c_str(), job.run_dir.c_str(),
                   std::string(records::kExitStatusFile).c_str());
      return {1};
    }
    failures = 0;
    // Read after the status, so a job seen finished has all its attempts reported first.
    report_new_attempts(job, tty, attempts_seen);
    if (!running_since && status->running) running_since = Clock::now();
    std::string line = "dtrain: job " + job.job_id + " " + status->state;
    if (!status->reason.empty() && !status->finished) line += " (" + status->reason + ")";
    if (running_since) {
      line += ", running " + format_elapsed(std::chrono::duration_cast<std::chrono::seconds>(
                                 Clock::now() - *running_since));
      // Written as `dtrain stats` writes its rates: "%.3g" made 1234 steps/s "1.23e+03".
      if (auto steps = rate.update()) line += ", " + report::plain_number(*steps) + " steps/s";
    }
    if (tty) {
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
    } else if (status->state != last_state) {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    last_state = status->state;
    if (status->finished) {
      if (tty) std::fputs("\n", stderr);
      if (status->node_failed) report_failed_nodes(job, *status);
      BatchEnd end{1, status->walltime_reached};
      if (status->exit_status) {
        end.status = *status->exit_status;
      } else if (auto from_file = read_exit_status(job.run_dir)) {
        end.status = *from_file;
      } else {
        std::fprintf(stderr, "dtrain: job %s ended (%s) without an exit status\n",
                     job.job_id.c_str(), status->state.c_str());
      }
      return end;
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
}

}  // namespace dtrain::cli
