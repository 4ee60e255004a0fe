// Errors of the plugin's pure parts. Each is a bad input -- a user's option or DTRAIN_* variable,
// an admin's plugstack.conf argument -- and its message names that input, what was expected and
// what was found, ready to hand to slurm_error() as it is.
#pragma once

#include "common/errors.hpp"

namespace dtrain::spank {

// A bad --dtrain* option value or DTRAIN_* environment variable (the user's mistake).
class OptionError : public InputError {
 public:
  using InputError::InputError;
};

// A bad plugstack.conf argument (the administrator's mistake).
class ConfigError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace dtrain::spank
