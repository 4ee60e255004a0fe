#include "affinity/self_apply.hpp"

#include "affinity/binding.hpp"
#include "affinity/errors.hpp"
#include "affinity/policy.hpp"

namespace dtrain::affinity {
namespace {

std::string value_or_dash(const Environment& env, std::string_view name) {
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
