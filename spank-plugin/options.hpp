// The plugin's user-facing options: one table (name, argument, help text, environment variable)
// from which plugin.cpp registers the SPANK options and docs/plugin.md is written, and one
// validator per option, so a bad value is refused by srun/sbatch while they parse the command
// line -- before anything is allocated or launched -- with a message naming the option, the value
// and the accepted values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtrain::spank {

enum class OptionId : int {
  kDtrain = 1,  // --dtrain[=POLICY]
  kGpu,
  kGpuVisibility,
  kCpu,
  kNic,
  kFramework,
  kRunDir,
  kVerbose,
};

enum class ArgKind { kNone = 0, kRequired = 1, kOptional = 2 };  // SPANK's has_arg values

struct OptionSpec {
  OptionId id;
  std::string_view name;     // without the leading "--"
  std::string_view arginfo;  // shown in --help as --name=ARGINFO; "" for a flag
  std::string_view usage;    // help text; starts with "[dtrain]"
  ArgKind arg;
  std::string_view environment;  // the DTRAIN_* variable used when the option is not given
};

const std::vector<OptionSpec>& option_specs();
const OptionSpec& option_spec(OptionId id);

// What the command line (or #SBATCH lines) asked for, validated but kept as text, so that the
// step's settings can still be combined with the environment and the admin's defaults. nullopt:
// not given.
struct RequestedOptions {
  std::optional<std::string> dtrain;  // "" for a bare --dtrain
  std::optional<std::string> gpu;
  std::optional<std::string> gpu_visibility;
  std::optional<std::string> cpu;
  std::optional<std::string> nic;
  std::optional<std::string> framework;
  std::optional<std::string> run_dir;
  bool verbose = false;

  // True when any option other than --dtrain itself was given.
  bool any_setting() const;
};

// Validates one option as Slurm hands it to the option callback (`value` is null for a flag or a
// bare --dtrain) and records it. Throws OptionError naming `--name`, the value and the accepted
// values. A later value replaces an earlier one: Slurm calls the callback twice in slurmstepd,
// and srun inside a batch job sees the #SBATCH value before its own command line.
void record_option(RequestedOptions& options, OptionId id, const char* value);

// Checks `value` for option `id`, naming `what` (the option or its environment variable) in the
// message. Used for the command line and the DTRAIN_* variables alike.
void validate_option_value(OptionId id, std::string_view value, std::string_view what);

}  // namespace dtrain::spank
