// Errors of the affinity library. Everything here is a problem with an input (a topology file, a
// policy name, a list on the command line, a request the node cannot satisfy), so both classes are
// InputErrors: every adapter maps them to "bad input" (the CLI: exit 2) through the error root.
#pragma once

#include "common/errors.hpp"

namespace dtrain::affinity {

// The node's topology or a request against it is unusable. Messages follow
// "dtrain: <component>: <subject>: <problem>; expected X, got Y".
class TopologyError : public InputError {
 public:
  using InputError::InputError;
};

// An unknown policy name or a malformed list given by the user.
class PolicyError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace dtrain::affinity
