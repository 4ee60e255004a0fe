// Whether a launch that ended asked for a requeue, by the ranks' own word rather than the
// launcher's status. A checkpointed code that saved after the agreed stop exits kExitRequeue (85)
// on every rank, but not every launcher passes that on: MPICH's Hydra `mpiexec` exited 0 in 4 of 6
// such runs (docs/install.md, "On Polaris"), and what Cray PALS returns is not known. Each rank's
// logger writes how its rank ended (records/rank_lines.hpp), so the job script and `supervise` act
// on those lines whatever the launcher said. Pure: the caller scans the logs of the last attempt.
#pragma once

#include <string>
#include <vector>

#include "report/rank_log_scan.hpp"

namespace dtrain::report {

struct LaunchStatus {
  int status = 0;    // the status to act on: the launcher's, or kExitRequeue
  std::string note;  // why it differs from the launcher's; empty when it does not
};

// kExitRequeue when the launcher's status is not, but at least one rank of the attempt exited
// kExitRequeue and every other rank did too, or was ended by the launcher's teardown after it
// (SIGTERM, SIGKILL, SIGINT, SIGHUP, or no exit line: its logger was ended with it). A rank that
// failed in any other way, or exited 0, keeps the launcher's status: the job did not stop as one.
LaunchStatus launch_status_from_ranks(int launcher_status, const std::vector<RankLogScan>& scans);

}  // namespace dtrain::report
