// A process applying its own entry of the rank map after it started: libdtrain's init() under a
// bare mpiexec, where neither `dtrain bind` nor the SPANK plugin ran. The decision is theirs
// (decide_binding, binding.hpp) under Moment::kAfterStart: the process may already be bound
// (mpirun binds each rank to a core by default) and may share the node with more ranks than it has
// cores (oversubscribed test runs), which an adapter at process birth would override or refuse.
// This file adds DTRAIN_AFFINITY and the words of init()'s one line. Pure: the environment and the
// current CPU affinity come in as values.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "affinity/cpuset.hpp"
#include "affinity/topology.hpp"
#include "launch/launcher_env.hpp"

namespace dtrain::affinity {

// DTRAIN_AFFINITY.
enum class SelfApplyMode {
  kAuto,  // unset or empty: apply when a launcher started the process
  kOn,    // apply, also to a single process started without a launcher
  kOff,   // never
};

// nullopt is an unset variable. Throws PolicyError naming DTRAIN_AFFINITY and the accepted values.
SelfApplyMode parse_self_apply_mode(std::optional<std::string_view> value);

struct SelfApplyFacts {
  int local_rank = 0;
  int local_size = 1;
  launch::Environment env;  // the process's environment: the scheduler's GPU grant is read from it
  // The CPUs the process may run on now; consulted only when the topology is this machine.
  // nullopt (or empty): unknown.
  std::optional<CpuSet> current_cpus;
};

struct SelfApply {
  // What `dtrain bind` exports for this rank's entry, less the NIC variables (NCCL_IB_HCA,
  // NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, UCX_NET_DEVICES) already set in facts.env: a variable
  // the user set wins.
  launch::Environment environment;
  std::optional<CpuSet> bind;  // bind every thread to this; nullopt: leave the CPUs as they are
  std::string not_bound;       // why `bind` is nullopt, e.g. "bound by the launcher"
  // "gpus 3 cpus 0-7,32-39 nics mlx5_0": gpus as written to CUDA_VISIBLE_DEVICES ("-" for none),
  // the rank's cpuset, its NICs when it has any.
  std::string summary;
};

// The rank's entry under the default policy (gpu closest, own visibility, cpu numa, nic closest).
// On this machine the scheduler's GPU grant is honoured (like `dtrain bind` without
// --topology); a process whose CPU affinity is narrower than the node's allowed CPUs was bound by
// its launcher and keeps that binding (DTRAIN_CPUSET then reports it); more ranks than cores leaves
// the CPUs alone instead of failing. An XML topology never binds. Throws TopologyError/PolicyError
// as solve() and gpu_grant_from_environment() do.
SelfApply plan_self_apply(const Node& node, const SelfApplyFacts& facts);

}  // namespace dtrain::affinity
