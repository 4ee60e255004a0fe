#include "settings.hpp"

#include <optional>

#include "common/on_off.hpp"
#include "errors.hpp"

namespace dtrain::spank {
namespace {

std::optional<std::string> variable(const launch::Environment& env, OptionId id) {
  const auto it = env.find(option_spec(id).environment);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

// The command line's value, else the variable's (validated here: srun has not seen it yet).
std::optional<std::string> pick(const std::optional<std::string>& command_line,
                                const launch::Environment& env, OptionId id) {
  if (command_line) return command_line;
  auto value = variable(env, id);
  if (value) validate_option_value(id, *value, option_spec(id).environment);
  return value;
}

StepSettings resolve(const RequestedOptions& cmd, const launch::Environment& env,
                     const PluginConfig& config) {
  StepSettings s;
  s.policy = config.default_policy;
  s.policy.enabled = config.enabled_by_default;

  if (cmd.dtrain) {
    s.policy = cmd.dtrain->empty()
                   ? config.default_policy
                   : parse_step_policy(*cmd.dtrain, "--dtrain", config.default_policy);
  } else if (cmd.any_setting()) {
    s.policy = config.default_policy;
  } else if (auto bind = variable(env, OptionId::kDtrain)) {
    if (auto on = dtrain::parse_switch(*bind)) {
      s.policy = config.default_policy;
      s.policy.enabled = *on;
    } else {
      s.policy = parse_step_policy(*bind, "DTRAIN_BIND (1, 0 or a POLICY)", config.default_policy);
    }
  }

  auto& a = s.policy.affinity;
  if (auto v = pick(cmd.gpu, env, OptionId::kGpu)) a.gpu = affinity::parse_gpu_policy(*v);
  if (auto v = pick(cmd.gpu_visibility, env, OptionId::kGpuVisibility)) {
    a.gpu_visibility = affinity::parse_gpu_visibility(*v);
  }
  if (auto v = pick(cmd.cpu, env, OptionId::kCpu)) a.cpu = affinity::parse_cpu_policy(*v);
  if (auto v = pick(cmd.nic, env, OptionId::kNic)) a.nic = affinity::parse_nic_policy(*v);
  if (auto v = pick(cmd.framework, env, OptionId::kFramework)) {
    s.framework = launch::parse_framework(*v);
  }
  if (auto v = pick(cmd.run_dir, env, OptionId::kRunDir)) s.run_dir = *v;

  s.verbose = cmd.verbose || config.verbose;
  if (auto v = variable(env, OptionId::kVerbose)) {
    auto on = dtrain::parse_switch(*v);
    if (!on) {
      throw OptionError("dtrain: DTRAIN_VERBOSE: expected 1 or 0, got \"" + *v + "\"");
    }
    s.verbose = s.verbose || *on;
  }
  return s;
}

}  // namespace

StepSettings resolve_settings(const RequestedOptions& command_line,
                              const launch::Environment& environment, const PluginConfig& config) {
  try {
    return resolve(command_line, environment, config);
  } catch (const OptionError&) {
    throw;
  } catch (const std::exception& e) {
    throw OptionError(e.what());
  }
}

}  // namespace dtrain::spank
