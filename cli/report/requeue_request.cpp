#include "report/requeue_request.hpp"

#include <csignal>
#include <dtrain/preemption.hpp>

#include "report/rank_ranges.hpp"

namespace dtrain::report {
namespace {

// The signals a launcher's teardown sends the ranks that had not exited when the first one did
// (Open MPI and Hydra: SIGTERM then SIGKILL; Slurm's step end: SIGKILL; a PTY's hang-up: SIGHUP).
bool teardown_signal(int signal) {
  return signal == SIGTERM || signal == SIGKILL || signal == SIGINT || signal == SIGHUP;
}

}  // namespace

LaunchStatus launch_status_from_ranks(int launcher_status, const std::vector<RankLogScan>& scans) {
  LaunchStatus out{launcher_status, {}};
  if (launcher_status == kExitRequeue) return out;
  std::vector<int> asked;
  std::vector<int> ended;
  for (const auto& scan : scans) {
    const auto& exit = scan.exit();
    if (exit && exit->signal == 0 && exit->status == kExitRequeue) {
      asked.push_back(scan.rank());
    } else if (!exit || (exit->signal != 0 && teardown_signal(exit->signal))) {
      ended.push_back(scan.rank());
    } else {
      return out;  // exited 0, failed, or killed by a signal of its own: not one agreed stop
    }
  }
  if (asked.empty()) return out;
  out.status = kExitRequeue;
  out.note = "the launcher exited with status " + std::to_string(launcher_status) + ", but " +
             (ended.empty() ? std::string("every rank") : ranks_text(asked)) + " exited " +
             std::to_string(kExitRequeue) + " after saving (a requeue)";
  if (!ended.empty()) {
    out.note += " and the launcher ended " + ranks_text(ended) + " after";
  }
  out.note += ": the job acts on status " + std::to_string(kExitRequeue);
  return out;
}

}  // namespace dtrain::report
