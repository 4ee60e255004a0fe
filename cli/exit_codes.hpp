// The CLI's exit codes (docs/errors.md) and the one funnel that maps an exception to its code:
// the error root's two categories (common/errors.hpp: InputError 2, Failure 1), libdtrain's
// dtrain::Error by its code, a logic error 70.
#pragma once

#include "commands.hpp"

namespace dtrain::cli {

inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitSoftware = 70;  // EX_SOFTWARE: a bug in dtrain

// Runs the action, mapping every exception to its message on stderr and its exit code.
int run_guarded(const Action& action);

}  // namespace dtrain::cli
