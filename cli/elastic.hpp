// The elastic node range on Slurm (`nodes: MIN..MAX`, docs/fault-tolerance.md), pure: which of a
// job's nodes are lost after a failed attempt, and the next attempt's srun without them.
// cmd_supervise.cpp asks Slurm and runs the launch; supervisor.cpp decides whether to restart.
#pragma once

#include <string>
#include <vector>

#include "plan/schedulers/scheduler.hpp"

namespace dtrain::cli {

struct LostNode {
  std::string name;   // "node2"
  std::string state;  // "DOWN", "FAIL", "NOT_RESPONDING"
};

// The nodes of `failures` (the scheduler's failed-node query) a job cannot run on any more: down,
// failing, or not responding (Slurm's '*'). A drained node still runs a job's steps: not lost.
std::vector<LostNode> lost_nodes(const std::vector<plan::NodeFailure>& failures);

// "node node2 lost (DOWN)", "node node2 lost (DOWN), node node3 lost (NOT_RESPONDING)".
std::string describe_lost_nodes(const std::vector<LostNode>& lost);

// The launch `argv` (srun OPTIONS... PROGRAM ARGS...) on `nodes` nodes without `exclude`: its
// `--nodes=N` becomes `--nodes=<nodes>`, followed by `--exclude=a,b --overlap` when `exclude` is
// not empty (the failed step may still hold its CPUs); --ntasks-per-node stays,
// so the world size shrinks with the nodes. Only srun's own options are touched (those before the
// program). Throws InputError when argv is not an srun with --nodes=N.
std::vector<std::string> shrink_launch(const std::vector<std::string>& argv, int nodes,
                                       const std::vector<std::string>& exclude);

}  // namespace dtrain::cli
