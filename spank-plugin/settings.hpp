// One step's settings: the command line (or #SBATCH lines) first, then the DTRAIN_* variables of
// the environment srun/sbatch runs in, then the administrator's defaults -- pyxis' precedence, in
// one pure function so that the unit tests can check every combination.
#pragma once

#include <string>

#include "config.hpp"
#include "launch/framework_env.hpp"
#include "launch/launcher_env.hpp"
#include "options.hpp"
#include "step_policy.hpp"

namespace dtrain::spank {

struct StepSettings {
  StepPolicy policy;  // policy.enabled: whether the plugin touches the step at all
  launch::Framework framework = launch::Framework::kNone;
  std::string run_dir;  // "" when not asked for
  bool verbose = false;
};

// Throws OptionError naming the variable when a DTRAIN_* variable holds a bad value, e.g.
// `dtrain: affinity: DTRAIN_GPU: unknown policy "fast"; expected closest, identity or none, got
// "fast"`. Any option besides --dtrain on the command line turns binding on as --dtrain would:
// asking for a framework or a GPU policy means asking for dtrain. The variables only fill in
// values; DTRAIN_BIND (1/0, or a POLICY) is the one that turns binding on or off.
StepSettings resolve_settings(const RequestedOptions& command_line,
                              const launch::Environment& environment, const PluginConfig& config);

}  // namespace dtrain::spank
