#include "affinity/binding.hpp"

#include "affinity/grant.hpp"
#include "affinity/rank_env.hpp"

namespace dtrain::affinity {
namespace {

bool grant_counts(GrantRule rule, const Node& node) {
  switch (rule) {
    case GrantRule::kNever:
      return false;
    case GrantRule::kThisMachine:
      return node.is_this_machine;
    case GrantRule::kAlways:
      return true;
  }
  return false;
}

// Applies the process's current CPUs to `restriction` and `policy`; returns why the CPUs will not
// be bound, or nullopt when that is not decided yet.
std::optional<NotBound> apply_current_cpus(const Node& node, const BindingFacts& facts,
                                           Moment moment, Restriction& restriction,
                                           Policy& policy) {
  // CPU numbers only mean something on the machine they were read on.
  if (!node.is_this_machine) return NotBound::kNotThisMachine;
  if (restriction.cpus || !facts.current_cpus) return std::nullopt;
  if (moment == Moment::kAtBirth) {
    restriction.cpus = facts.current_cpus;
    return std::nullopt;
  }
  if (!facts.current_cpus->empty() && !node.all_pus().is_subset_of(*facts.current_cpus)) {
    // The launcher chose (mpirun: a core per rank for up to 2 ranks): keep its choice, and let
    // DTRAIN_CPUSET say what it is.
    restriction.cpus = facts.current_cpus;
    policy.cpu = CpuPolicy::kNone;
    return NotBound::kLauncherBound;
  }
  return std::nullopt;
}

}  // namespace

Binding decide_binding(const Node& node, const Policy& policy, const BindingFacts& facts,
                       const BindingRules& rules) {
  Binding out;
  out.policy = policy;
  out.local_rank = facts.local_rank;
  Restriction restriction = facts.requested;
  RankEnvInputs inputs;
  if (!restriction.gpus && policy.gpu != GpuPolicy::kNone && grant_counts(rules.grant, node)) {
    GpuGrant grant = gpu_grant_from_environment(facts.grant_env);
    restriction.gpus = std::move(grant.gpus);
    inputs.inherited_visible_devices = std::move(grant.inherited_visible_devices);
  }
  std::optional<NotBound> not_bound =
      apply_current_cpus(node, facts, rules.moment, restriction, out.policy);
  if (rules.moment == Moment::kAfterStart && out.policy.cpu == CpuPolicy::kNuma &&
      facts.local_size > static_cast<int>(node.cores.size())) {
    // Oversubscribed: no whole core per rank, so binding would only pile ranks up.
    out.policy.cpu = CpuPolicy::kNone;
    if (!not_bound) not_bound = NotBound::kOversubscribed;
  }
  if (!not_bound && out.policy.cpu == CpuPolicy::kNone) not_bound = NotBound::kCpuPolicyNone;

  out.map = solve(node, facts.local_size, out.policy, restriction);
  out.environment = rank_environment(node, out.map, facts.local_rank, inputs);
  if (facts.framework != launch::Framework::kNone) {
    out.environment.merge(
        launch::framework_environment(facts.framework, facts.placement(), facts.inherited_env));
  }
  out.not_bound = not_bound.value_or(NotBound::kBound);
  if (out.not_bound == NotBound::kBound) out.bind = out.rank().cpus;
  return out;
}

}  // namespace dtrain::affinity
