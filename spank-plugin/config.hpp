// The administrator's settings: the `key=value` arguments after the plugin's path on its
// plugstack.conf line. Strict, as pyxis' config.c: an unknown key, a repeated key or a bad value
// is an error naming the key, so a typo fails loudly when Slurm loads the plugin instead of
// silently changing what every job gets.
#pragma once

#include <string>
#include <vector>

#include "step_policy.hpp"

namespace dtrain::spank {

struct PluginConfig {
  // An hwloc XML export describing this site's compute nodes; empty: ask hwloc about the live
  // machine. GPU indices Slurm grants (SLURM_STEP_GPUS) are taken as indices into its GPUs.
  std::string topology;
  StepPolicy default_policy;        // what a bare --dtrain means
  bool enabled_by_default = false;  // bind every step, --dtrain=off opting out
  bool verbose = false;             // as if every step had --dtrain-verbose
};

// Parses plugstack.conf arguments (SPANK's argc/argv). Throws ConfigError, e.g.
// `dtrain: plugstack.conf: verbose: expected 0 or 1 (or yes/no, true/false), got "maybe"`.
PluginConfig parse_config(const std::vector<std::string>& args);

}  // namespace dtrain::spank
