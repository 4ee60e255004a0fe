#include "job_launch.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "batch_job.hpp"
#include "common/errors.hpp"
#include "common/input_file.hpp"
#include "dtrain/preemption.hpp"
#include "mpijob_submit.hpp"
#include "plan/schedulers/batch_script.hpp"
#include "process.hpp"
#include "rank_prefix.hpp"
#include "records/rank_files.hpp"
#include "records/rank_lines.hpp"
#include "records/run_dir_layout.hpp"
#include "report/first_error.hpp"
#include "report/stats.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {
namespace {

// The exit status of coreutils' `timeout` when the time ran out.
constexpr int kTimeoutExit = 124;

void print_throughput(const std::string& run_dir) {
  try {
    const auto stats = read_run_stats(run_dir);
    std::printf("\n# throughput (dtrain stats %s)\n%s", run_dir.c_str(),
                report::format_stats_table(stats).c_str());
  } catch (const std::exception&) {
    // A job that does not use libdtrain's Meter has no records; that is not an error.
  }
}

// After a failed job: the rank that failed first, as `dtrain logs --first-error` names it. At the
// walltime no rank is to blame, whatever the logs say: the launcher's SIGKILL can take a rank's
// logger before its exit line, and that rank would look silent.
void print_first_failure(const std::string& run_dir, bool walltime_reached) {
  if (walltime_reached) {
    std::printf(
        "dtrain: first failure: no rank failed on its own; the launcher stopped the ranks "
        "at the job's walltime (details: dtrain logs --first-error %s)\n",
        run_dir.c_str());
    return;
  }
  try {
    const auto logs = list_rank_files(run_dir, records::kLogExtension);
    if (logs.empty()) return;
    const std::string summary = report::summarize_first_error(read_first_error(run_dir, logs));
    if (summary.empty()) return;
    std::printf("dtrain: first failure: %s (details: dtrain logs --first-error %s)\n",
                summary.c_str(), run_dir.c_str());
    // The hang watch saw the job while it ran: its verdict (the line the job printed) says what
    // the rank it ended was doing, which its exit (SIGKILL) alone does not.
    const std::string hang_log = (std::filesystem::path(run_dir) / records::kHangLogFile).string();
    if (std::filesystem::exists(hang_log)) {
      const std::string verdict = read_last_line(hang_log);
      const auto text = verdict.find("dtrain: hang: ");
      if (text != std::string::npos) {
        std::printf("dtrain: the hang watch's last verdict (%s): %s\n", hang_log.c_str(),
                    verdict.substr(text + 8).c_str());
      }
    }
  } catch (const std::exception&) {
    // Logs the job did not write (a script that failed before any rank started) are no error.
  }
}

// The launcher can end a rank, logger and all, before it hears which rank was lost (Open MPI's
// abort has Slurm end the whole step within milliseconds): its log gets the line another rank
// wrote. `dtrain supervise` has done it already for a job with restarts; then nothing is left.
void note_lost_rank(const std::string& run_dir) {
  try {
    append_lost_rank_notes(run_dir, std::nullopt, "dtrain submit");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtrain: warning: %s\n", e.what());
  }
}

// The exit status of a local job that dtrain submit passed a signal on to (docs/submit.md): the
// shell's 128 + N once the job has stopped, unless the ranks completed anyway or saved and asked
// for a requeue (85), which a wrapper acts on.
int local_job_status(const JobEnd& end) {
  if (end.stop_signal == 0 || end.status == 0 || end.status == kExitRequeue) return end.status;
  return 128 + end.stop_signal;
}

// "FAILED (exit status 124)", with the walltime when that is what ended the job; "stopped by
// SIGTERM, passed on to the job (exit status 143)" when a signal to dtrain submit did
// (`stop_signal`, 0 when none).
std::string outcome(int status, bool walltime_reached, const plan::JobSpec& spec,
                    int stop_signal = 0) {
  if (status == 0) return "completed (exit status 0)";
  if (stop_signal != 0 && status == 128 + stop_signal) {
    return "stopped by " + records::signal_name(stop_signal) +
           ", passed on to the job (exit status " + std::to_string(status) + ")";
  }
  // A deliberate stop (docs/fault-tolerance.md): the ranks checkpointed and asked to be requeued. A
  // batch job script requeues itself; here nothing does, so say how to go on.
  if (status == kExitRequeue && !walltime_reached) {
    return "stopped for a requeue (exit status " + std::to_string(status) +
           "): the ranks saved a checkpoint and asked to be run again, which a local job does "
           "not do by itself; to resume, run the program again on the same checkpoint directory "
           "(a new submission gets a new run directory)";
  }
  std::string out = "FAILED (exit status " + std::to_string(status) + ")";
  if (walltime_reached) {
    out += ": its walltime";
    if (spec.walltime_seconds) out += " (" + plan::hh_mm_ss(*spec.walltime_seconds) + ")";
    out += " was reached";
  }
  return out;
}

// Also into the run directory, so that `dtrain logs --first-error` says the same later.
void print_end(const std::string& job_id, const std::string& run_dir, int status,
               bool walltime_reached, const plan::JobSpec& spec, int stop_signal = 0) {
  try {
    append_job_end_record(run_dir, {status, walltime_reached});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtrain: warning: %s\n", e.what());
  }
  print_throughput(run_dir);
  if (status != 0 && status != kExitRequeue && !walltime_reached && stop_signal == 0) {
    note_lost_rank(run_dir);
  }
  if (status != 0 && status != kExitRequeue) print_first_failure(run_dir, walltime_reached);
  std::printf("dtrain: job %s %s; logs and metrics in %s\n", job_id.c_str(),
              outcome(status, walltime_reached, spec, stop_signal).c_str(), run_dir.c_str());
}

// Whether the ranks of a job that runs from here prefix their terminal lines with their rank:
// at a terminal unless --no-rank-prefix; DTRAIN_RANK_PREFIX given by the user is kept.
void choose_rank_prefix(bool wanted) {
  if (!wanted) {
    ::setenv(kRankPrefixVariable, "0", 1);
  } else if (::isatty(STDOUT_FILENO) == 1) {
    ::setenv(kRankPrefixVariable, "1", 0);
  }
}

// A job runs in an allocation of its site's scheduler, on the nodes the allocation holds.
void check_fits(const PlannedJob& job, const plan::HeldAllocation& allocation,
                const std::string& command) {
  const plan::LaunchPlan& plan = job.plan;
  const std::string why =
      plan::site_mismatch(allocation, job.site.name, std::string(job.scheduler().name()));
  if (!why.empty()) throw UsageError("dtrain: " + command + ": " + why);
  if (allocation.nodes && plan.nodes > *allocation.nodes) {
    throw UsageError("dtrain: " + command + ": the job asks for " + std::to_string(plan.nodes) +
                     " nodes, and allocation " + allocation.id + " (" + allocation.variable +
                     ") holds " + std::to_string(*allocation.nodes) +
                     "; expected nodes from 1 to " + std::to_string(*allocation.nodes));
  }
}

// The batch site's job script, run now by bash inside the allocation: its launcher (srun,
// mpiexec, mpirun over the node file) starts the ranks on the allocation's nodes; its directives
// are comments to bash. The variables an allocation's shell carries that the launcher would take
// over the script's own node and task counts (salloc -n sets srun's task count) are left out.
int run_in_allocation(PlannedJob& job, const plan::HeldAllocation& allocation, bool rank_prefix) {
  const plan::LaunchPlan& plan = job.plan;
  const plan::SchedulerAdapter& scheduler = job.scheduler();
  write_run_dir(plan, job.spec_text);
  std::printf(
      "dtrain: job %s (site %s, %d ranks on %d node(s) of allocation %s), run directory %s\n",
      plan.job_id.c_str(), plan.site.c_str(), plan.world_size(), plan.nodes, allocation.id.c_str(),
      plan.run_dir.c_str());
  std::fflush(stdout);
  std::vector<std::string> argv = {"env"};
  if (scheduler.can_shrink()) {
    for (const auto& name : scheduler.shrunk_launch_unset()) {
      argv.push_back("-u");
      argv.push_back(name);
    }
  }
  argv.push_back("bash");
  argv.push_back(plan.run_dir + "/" + plan.script_name);
  choose_rank_prefix(rank_prefix);
  const JobEnd end = run_job(argv);
  const int status = local_job_status(end);
  print_end(plan.job_id, plan.run_dir, status, false, job.spec, end.stop_signal);
  return status;
}

}  // namespace

int launch_planned(PlannedJob& job, const LaunchOptions& opts) {
  const plan::LaunchPlan& plan = job.plan;
  for (const auto& w : plan.warnings) std::fprintf(stderr, "dtrain: warning: %s\n", w.c_str());
  if (opts.allocation) check_fits(job, *opts.allocation, opts.command);
  if (opts.dry_run) {
    std::fputs(plan.script.c_str(), stdout);
    return 0;
  }
  if (opts.allocation) return run_in_allocation(job, *opts.allocation, opts.rank_prefix);
  const plan::Submission submission = job.scheduler().submission();
  if (submission == plan::Submission::kManifest) {
    if (opts.wait) {
      throw UsageError("dtrain: " + opts.command + ": --wait: not supported for site " + plan.site +
                       " (Kubernetes); follow the job with `kubectl get mpijob " + plan.name +
                       " -w` and `kubectl logs -f job/" + plan.name + "-launcher`");
    }
    const SubmittedMpiJob submitted = submit_mpijob(job);
    const std::string ns =
        job.spec.k8s_namespace.empty() ? std::string() : " -n " + job.spec.k8s_namespace;
    std::printf(
        "dtrain: submitted %s to kubernetes (site %s, %d ranks), record in %s\n"
        "dtrain: follow it with `kubectl get mpijob %s%s -w` and `kubectl logs -f "
        "job/%s-launcher%s`\n",
        submitted.object.c_str(), plan.site.c_str(), plan.world_size(), submitted.run_dir.c_str(),
        plan.name.c_str(), ns.c_str(), plan.name.c_str(), ns.c_str());
    return 0;
  }
  if (submission == plan::Submission::kHeldBatchJob) {
    const SubmittedJob submitted = submit_batch(job);
    std::printf("dtrain: submitted job %s to %s (site %s, %d ranks), run directory %s\n",
                submitted.job_id.c_str(), std::string(job.scheduler().name()).c_str(),
                plan.site.c_str(), plan.world_size(), submitted.run_dir.c_str());
    std::fflush(stdout);
    if (!opts.wait) return 0;
    const BatchEnd end = wait_for_batch(submitted);
    print_end(submitted.job_id, submitted.run_dir, end.status, end.walltime_reached, job.spec);
    return end.status;
  }
  write_run_dir(plan, job.spec_text);
  std::printf("dtrain: job %s (%s, %d ranks), run directory %s\n", plan.job_id.c_str(),
              plan.site.c_str(), plan.world_size(), plan.run_dir.c_str());
  std::fflush(stdout);
  choose_rank_prefix(opts.rank_prefix);
  const JobEnd end = run_job({"bash", plan.run_dir + "/" + plan.script_name});
  const int status = local_job_status(end);
  // launch.sh runs mpirun under `timeout`, which exits 124 when the walltime ran out.
  const bool walltime_reached = status == kTimeoutExit && job.spec.walltime_seconds.has_value();
  print_end(plan.job_id, plan.run_dir, status, walltime_reached, job.spec, end.stop_signal);
  return status;
}

std::optional<plan::HeldAllocation> this_allocation() {
  auto allocation = plan::held_allocation(launch::current_environment());
  if (allocation && !allocation->nodes && !allocation->node_file.empty()) {
    allocation->nodes = plan::distinct_hosts(dtrain::read_input_file(
        allocation->node_file, "the allocation's node file (PBS_NODEFILE)", 16 << 20));
  }
  return allocation;
}

}  // namespace dtrain::cli
