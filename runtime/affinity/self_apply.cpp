#include "affinity/self_apply.hpp"

#include "affinity/affinity.hpp"
#include "affinity/errors.hpp"
#include "affinity/grant.hpp"
#include "affinity/policy.hpp"
#include "affinity/rank_env.hpp"

namespace dtrain::affinity {
namespace {

std::string value_or_dash(const Environment& env, std::string_view name) {
  auto it = env.find(name);
  return it == env.end() || it->second.empty() ? std::string("-") : it->second;
}

}  // namespace

SelfApplyMode parse_self_apply_mode(std::optional<std::string_view> value) {
  if (!value || value->empty()) return SelfApplyMode::kAuto;
  if (*value == "on") return SelfApplyMode::kOn;
  if (*value == "off") return SelfApplyMode::kOff;
  throw PolicyError(
      "dtrain: DTRAIN_AFFINITY: unknown value; expected on or off (or unset: apply "
      "when a launcher started the process), got \"" +
      std::string(*value) + "\"");
}

SelfApply plan_self_apply(const Node& node, const SelfApplyFacts& facts) {
  Policy policy;
  Restriction restriction;
  RankEnvInputs inputs;
  std::string not_bound;  // why the CPUs are left alone; empty: bind them
  if (!node.is_this_machine) {
    not_bound = "topology " + node.source + " is not this machine";
  } else {
    // The scheduler's grant numbers this machine's GPUs; against an XML file it would name the
    // wrong ones.
    GpuGrant grant = gpu_grant_from_environment(facts.env);
    restriction.gpus = std::move(grant.gpus);
    inputs.inherited_visible_devices = std::move(grant.inherited_visible_devices);
    const bool known = facts.current_cpus && !facts.current_cpus->empty();
    if (known && !node.all_pus().is_subset_of(*facts.current_cpus)) {
      // The launcher chose (mpirun: a core per rank for up to 2 ranks): keep its choice, and let
      // DTRAIN_CPUSET say what it is.
      restriction.cpus = *facts.current_cpus;
      policy.cpu = CpuPolicy::kNone;
      not_bound = "bound by the launcher";
    }
  }
  if (policy.cpu == CpuPolicy::kNuma) {
    const int cores = static_cast<int>(node.cores.size());
    if (facts.local_size > cores) {
      // Oversubscribed: no whole core per rank, so binding would only pile ranks up.
      policy.cpu = CpuPolicy::kNone;
      if (not_bound.empty()) {
        not_bound =
            std::to_string(facts.local_size) + " ranks on " + std::to_string(cores) + " cores";
      }
    }
  }

  const RankMap map = solve(node, facts.local_size, policy, restriction);
  SelfApply out;
  out.environment = rank_environment(node, map, facts.local_rank, inputs);
  const auto& rank = map.ranks[static_cast<std::size_t>(facts.local_rank)];
  if (not_bound.empty()) out.bind = rank.cpus;
  out.not_bound = std::move(not_bound);
  out.summary = "gpus " + value_or_dash(out.environment, "CUDA_VISIBLE_DEVICES") + " cpus " +
                rank.cpus.to_list();
  if (const std::string nics = value_or_dash(out.environment, "DTRAIN_NICS"); nics != "-") {
    out.summary += " nics " + nics;
  }
  return out;
}

}  // namespace dtrain::affinity
