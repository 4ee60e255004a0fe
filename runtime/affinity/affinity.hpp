// The affinity solver: (node, ranks per node, policy, what the scheduler granted) -> for every
// local rank its GPUs, cpuset, NUMA domain and NICs. Pure: no hwloc, no environment, no I/O, so
// the CLI (`dtrain topo`, `dtrain bind`), the SPANK plugin and the planner all get the same answer
// for the same node, and the tests check it on real and hand-made topologies.
//
// What it guarantees (tests/unit/affinity/affinity_test.cpp checks each on every fixture):
//  1. GPUs: ranks = GPUs is a bijection; ranks < GPUs gives each rank an equal group of GPUs that
//     are adjacent in locality order (mutually close); ranks > GPUs shares them round-robin, so
//     ranks r and r+G share one GPU and no GPU carries two ranks more than another.
//  2. CPUs (policy numa): non-empty, disjoint between ranks, whole cores only, inside the NUMA
//     domain(s) of the rank's GPUs -- widened to their package, then to the node, only when that
//     domain has fewer cores than ranks -- and split evenly (sizes differ by at most one core).
//  3. NICs (policy closest): the nearest high-speed NIC to each of the rank's GPUs by PCI distance;
//     NICs at equal distance are spread so they carry balanced numbers of ranks.
//  4. No GPUs (or policy gpu none): ranks spread over NUMA domains in proportion to their cores,
//     in blocks (consecutive ranks share a domain), then cores split as in 2.
//  5. Deterministic. GPU indices are CUDA indices under CUDA_DEVICE_ORDER=PCI_BUS_ID, relative to
//     the scheduler's restriction when there is one.
#pragma once

#include <optional>
#include <vector>

#include "affinity/cpuset.hpp"
#include "affinity/policy.hpp"
#include "affinity/topology.hpp"

namespace dtrain::affinity {

// What the scheduler already granted this job on the node. Empty optionals: everything.
struct Restriction {
  // Indices into Node::gpus (PCI order) in the order the processes will enumerate them, e.g.
  // SLURM_STEP_GPUS=2,3 -> {2, 3}; relative index 0 is then node GPU 2.
  std::optional<std::vector<int>> gpus;
  // PUs the job may use (a cgroup cpuset or an explicit list).
  std::optional<CpuSet> cpus;
};

struct RankAssignment {
  int local_rank = 0;
  std::vector<int> gpus;          // the rank's own GPUs, relative to the visible GPUs (CUDA index)
  std::vector<int> node_gpus;     // the same GPUs as indices into Node::gpus
  std::vector<int> visible_gpus;  // CUDA_VISIBLE_DEVICES, relative indices: own, or own-first
  CpuSet cpus;                    // PUs; every allowed PU when the CPU policy is none
  int numa = -1;          // os_index of the NUMA domain of the rank's first core; -1 unknown
  std::vector<int> nics;  // indices into Node::nics
};

struct RankMap {
  Policy policy;
  std::vector<int>
      visible_gpus;  // indices into Node::gpus; relative GPU index i is visible_gpus[i]
  CpuSet allowed_cpus;
  std::vector<RankAssignment> ranks;  // ranks[r].local_rank == r
};

// Throws PolicyError for a bad request (ranks < 1, a restriction naming GPUs the node lacks) and
// TopologyError when the node cannot host it (no cores left after the restriction, more ranks
// than cores when binding CPUs). Messages name node.source.
RankMap solve(const Node& node, int ranks, const Policy& policy,
              const Restriction& restriction = {});

// The high-speed NICs when the node has any, otherwise every NIC (a box with only eth0 still
// gets it for NCCL's sockets): the NICs `nic: closest` and `nic: all` choose from.
std::vector<int> candidate_nics(const Node& node);

}  // namespace dtrain::affinity
