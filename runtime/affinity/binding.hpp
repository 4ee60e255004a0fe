// The one binding decision: which GPUs, CPUs and NICs a local rank gets, the environment that
// says so, the framework's rendezvous variables and whether to bind its CPUs. `dtrain bind`, the
// SPANK plugin and libdtrain's init() differ only in the facts they hold and in two rules (where
// the scheduler's GPU grant counts, and whether the process already runs); everything after the
// facts -- grant, restriction, solve, rank environment, framework environment, bind or not -- is
// here, so the three cannot drift apart. Pure: the facts and the environment come in as values.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "affinity/affinity.hpp"
#include "affinity/cpuset.hpp"
#include "affinity/policy.hpp"
#include "affinity/topology.hpp"
#include "launch/framework_env.hpp"
#include "launch/launcher_env.hpp"

namespace dtrain::affinity {

// When the scheduler's GPU grant (SLURM_STEP_GPUS, CUDA_VISIBLE_DEVICES...) restricts the GPUs.
// Its indices number this machine's GPUs; against another machine's topology they would name the
// wrong ones. Never read when the policy places no GPUs or the caller named the GPUs itself.
enum class GrantRule {
  kNever,        // the topology is a file the user named (`dtrain bind --topology`)
  kThisMachine,  // only when the topology is this machine (init())
  kAlways,       // the topology is declared to be this node: live, or the admin's topology=
};

// When the decision is made, which decides what the process's current CPUs mean.
enum class Moment {
  // At process birth (`dtrain bind`, the SPANK plugin): `current_cpus` is what the step may use,
  // a restriction to solve inside; a node that cannot host the ranks is an error.
  kAtBirth,
  // After the process started (init() under a bare mpiexec): a `current_cpus` narrower than the
  // node is the launcher's binding, kept as it is (mpirun binds a core per rank by default); more
  // ranks than cores leaves the CPUs alone instead of failing (oversubscribed test runs).
  kAfterStart,
};

struct BindingRules {
  GrantRule grant = GrantRule::kThisMachine;
  Moment moment = Moment::kAtBirth;
};

struct BindingFacts {
  int local_rank = 0;
  int local_size = 1;
  // What the user restricted by hand (--gpus-allowed, --cpus-allowed): wins over the grant and
  // over `current_cpus`, on any topology.
  Restriction requested;
  // The environment the scheduler's GPU grant is read from (see GrantRule).
  launch::Environment grant_env;
  // The CPUs the process (or step) may use now; read only when the topology is this machine.
  // nullopt: unknown.
  std::optional<CpuSet> current_cpus;
  launch::Framework framework = launch::Framework::kNone;
  // Where the rank sits in the job; called only for a framework other than kNone, after the
  // solve (so a node that cannot host the ranks is reported first). May throw LauncherEnvError.
  std::function<launch::JobPlacement()> placement;
  // The environment the rank inherits (the spec's env, the user's exports): a rendezvous port or
  // address set there wins over the framework's (see framework_environment).
  launch::Environment inherited_env;
};

// Why Binding::bind is empty.
enum class NotBound {
  kBound,           // it is not empty
  kNotThisMachine,  // the topology describes another machine (an XML file)
  kCpuPolicyNone,   // the policy asked for no CPU binding
  kLauncherBound,   // kAfterStart: the launcher already bound the process
  kOversubscribed,  // kAfterStart: more ranks than cores
};

struct Binding {
  Policy policy;  // as applied: kAfterStart may turn the CPU policy to none
  RankMap map;    // the whole node's map (the reports show it)
  int local_rank = 0;
  // rank_environment() for the rank's entry, plus the framework's rendezvous variables.
  launch::Environment environment;
  std::optional<CpuSet> bind;  // bind the CPUs to this; nullopt: leave them as they are
  NotBound not_bound = NotBound::kBound;

  const RankAssignment& rank() const { return map.ranks[static_cast<std::size_t>(local_rank)]; }
};

// Throws what solve() (TopologyError/PolicyError), gpu_grant_from_environment() (PolicyError)
// and `facts.placement` throw.
Binding decide_binding(const Node& node, const Policy& policy, const BindingFacts& facts,
                       const BindingRules& rules);

}  // namespace dtrain::affinity
