#include "affinity/self_apply.hpp"

#include "affinity/binding.hpp"
#include "affinity/errors.hpp"
#include "affinity/policy.hpp"
#include "affinity/rank_env.hpp"

namespace dtrain::affinity {
namespace {

std::string value_or_dash(const launch::Environment& env, std::string_view name) {
  auto it = env.find(name);
  return it == env.end() || it->second.empty() ? std::string("-") : it->second;
}

// The words init()'s one line uses for each reason.
std::string why_not_bound(const Node& node, const SelfApplyFacts& facts, NotBound why) {
  switch (why) {
    case NotBound::kBound:
      return "";
    case NotBound::kNotThisMachine:
      return "topology " + node.source + " is not this machine";
    case NotBound::kLauncherBound:
      return "bound by the launcher";
    case NotBound::kOversubscribed:
      return std::to_string(facts.local_size) + " ranks on " + std::to_string(node.cores.size()) +
             " cores";
    case NotBound::kCpuPolicyNone:
      break;  // the default policy binds
  }
  return "cpu none";
}

// The NIC selections a user (or a job script) may set by hand, e.g. NCCL_SOCKET_IFNAME=ib0 for a
// network the solver does not prefer: under a plain mpirun the rank inherits them, and they win
// (dtrain doctor still warns when one names a device the node lacks).
void keep_user_nic_variables(launch::Environment& planned, const launch::Environment& current) {
  for (std::string_view name : kNicLibraryVariables) {
    const auto set = current.find(name);
    if (set == current.end() || set->second.empty()) continue;
    if (const auto it = planned.find(name); it != planned.end()) planned.erase(it);
  }
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
  BindingFacts in;
  in.local_rank = facts.local_rank;
  in.local_size = facts.local_size;
  in.grant_env = facts.env;
  in.current_cpus = facts.current_cpus;
  const Binding b =
      decide_binding(node, Policy{}, in, {GrantRule::kThisMachine, Moment::kAfterStart});
  SelfApply out;
  out.environment = b.environment;
  keep_user_nic_variables(out.environment, facts.env);
  out.bind = b.bind;
  out.not_bound = why_not_bound(node, facts, b.not_bound);
  out.summary = "gpus " + value_or_dash(out.environment, "CUDA_VISIBLE_DEVICES") + " cpus " +
                b.rank().cpus.to_list();
  if (const std::string nics = value_or_dash(out.environment, "DTRAIN_NICS"); nics != "-") {
    out.summary += " nics " + nics;
  }
  return out;
}

}  // namespace dtrain::affinity
