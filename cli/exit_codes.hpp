#pragma once

#include "commands.hpp"

namespace dtrain::cli {

inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitSoftware = 70;  // EX_SOFTWARE: a bug in dtrain

// Runs the action, mapping every exception to its message on stderr and its exit code.
int run_guarded(const Action& action);

}  // namespace dtrain::cli
