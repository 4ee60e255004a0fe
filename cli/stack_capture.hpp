// Taking the stacks of a run's ranks on this node (`dtrain stacks`, and the hang watch before it
// ends a rank): which ranks run here and their processes (each rank log's start line names its host
// and pid), eu-stack or gdb run on them with a hard time bound, and
// RUN_DIR/stacks/rank-NNNNNN.json, where the hang watch leaves what it took for `logs --hang` and
// `report`. The merge and its text are report/stack_tree.hpp's.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "report/stack_tree.hpp"

namespace dtrain::cli {

struct StackTarget {
  int rank = 0;
  std::string host;
  long pid = 0;
  int attempt = 0;
};

struct RankProcesses {
  std::string host;  // this node
  int attempt = 0;
  std::vector<StackTarget> here;  // running here, with the pid their logger started
  // Ranks of the attempt whose stacks cannot be taken here, with why: another node's, exited, a
  // process that is no longer the rank.
  std::vector<report::RankStacks> elsewhere;
};

// The ranks of the run's current attempt as their logs' start and exit lines say (reads the logs
// whole). Throws UsageError when `run_dir` has no rank log.
RankProcesses find_rank_processes(const std::string& run_dir);

// The stacks of `targets` (processes of this machine), from elfutils' eu-stack (one run per
// process, as many at once as this machine has cores) or, where it is not installed, gdb (`thread
// apply all bt`, one gdb per core reading its share of the processes in turn), and for a process
// running CPython its Python frames (python_stacks.hpp: threads "(Python)", frame, ...), all within
// `limit`: a debugger still running then (a process blocked in the kernel holds ptrace) is killed,
// the process it held is continued unless it was stopped before, and its rank, with those not
// begun, says "not taken within N s". A process the debugger cannot attach to is that rank's
// problem, not an error.
std::vector<report::RankStacks> capture_stacks(const std::vector<StackTarget>& targets,
                                               std::chrono::milliseconds limit);

// RUN_DIR/stacks/rank-NNNNNN.json for each of `stacks` (renamed into place). Throws naming the
// file it cannot write.
void write_stacks(const std::string& run_dir, const std::vector<report::RankStacks>& stacks);
// What RUN_DIR/stacks holds, of the latest attempt there; none without the folder. Throws
// UsageError naming a file that is not what write_stacks writes.
std::vector<report::RankStacks> read_stacks(const std::string& run_dir);

}  // namespace dtrain::cli
