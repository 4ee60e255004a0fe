// What `--dtrain=POLICY` and the plugstack.conf `default_policy=` argument name: a preset of the
// four affinity settings, whether binding is on at all, and what happens when a task cannot be
// bound. A POLICY is a comma-separated list of words, e.g. "identity,best-effort":
//   default      the administrator's default_policy (on the command line only)
//   closest      GPUs in CPU-locality order, own GPUs only, NUMA cores, closest NIC (built in)
//   identity     local rank r gets GPU r (torchrun's assumption), otherwise as closest
//   own-first    as closest, but every GPU stays visible, the rank's own first (CUDA IPC/P2P)
//   off          no binding for this step (opting out where the site binds by default)
//   strict       a task that cannot be bound fails (the default)
//   best-effort  a task that cannot be bound runs unbound, with a warning on its stderr
// At most one preset and one of strict/best-effort; the single --dtrain-gpu/-cpu/... options then
// override the preset's fields.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "affinity/policy.hpp"

namespace dtrain::spank {

struct StepPolicy {
  bool enabled = true;
  affinity::Policy affinity;  // affinity::Policy{} is the closest preset
  bool best_effort = false;
};

// Parses `text` (see above), naming `what` (the option, variable or plugstack key) in the
// OptionError it throws. `fallback` is what "default" means; the config parser passes
// allow_default = false because default_policy cannot refer to itself.
StepPolicy parse_step_policy(std::string_view text, std::string_view what,
                             const StepPolicy& fallback, bool allow_default = true);

// The words a POLICY accepts, in the order --help and the messages list them.
const std::vector<std::string_view>& step_policy_words();

// "closest", "identity,best-effort", "off": the canonical text of `policy` when it matches a
// preset, else the four settings spelled out (for messages and docs).
std::string to_string(const StepPolicy& policy);

}  // namespace dtrain::spank
