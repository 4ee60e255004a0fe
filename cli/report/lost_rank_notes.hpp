// After a failed attempt: the ranks whose logs do not name the lost rank that another rank's log
// names, and the line each of them gets (records::format_lost_rank_note). Open MPI's abort has
// Slurm (PMIx) end the whole step within milliseconds of a lost rank, and MPICH's Hydra kills every
// survivor as fast, so a rank on another node can be ended, logger and all, before the peer alarm
// reaches it (docs/fault-tolerance.md, "How it works"). The process that outlives the launch
// (`dtrain supervise`, `dtrain submit`) completes their logs from the report of a rank that did say
// it. Pure: the caller reads the logs into scans (run_dir.hpp) and appends the lines.
#pragma once

#include <string_view>
#include <vector>

#include "records/rank_lines.hpp"
#include "report/rank_log_scan.hpp"

namespace dtrain::report {

// `scans`: one attempt's rank logs (read_attempt_scans). The earliest line naming a lost peer in
// libdtrain's words (RankLogScan::lost_peer) is the report; every rank with a start line that
// neither finished (exit status 0) nor is the lost rank, and whose log names no lost peer, gets a
// note quoting it, by rank. None when no rank named one, so a job whose ranks all said it is left
// as it is. `writer`: who appends the lines ("dtrain supervise").
std::vector<records::LostRankNote> lost_rank_notes(const std::vector<RankLogScan>& scans,
                                                   std::string_view writer);

}  // namespace dtrain::report
