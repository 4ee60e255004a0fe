// Errors of the affinity library. Everything here is a problem with an input (a topology file, a
// policy name, a list on the command line, a request the node cannot satisfy), so one base class
// lets every adapter map them to "bad input" (the CLI: exit 2) with a single catch.
#pragma once

#include <stdexcept>

namespace dtrain::affinity {

// The node's topology or a request against it is unusable. Messages follow
// "dtrain: <component>: <subject>: <problem>; expected X, got Y".
class TopologyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An unknown policy name or a malformed list given by the user. A TopologyError so that callers
// that already treat topology problems as bad input (cli/exit_codes.cpp) need no new case.
class PolicyError : public TopologyError {
 public:
  using TopologyError::TopologyError;
};

}  // namespace dtrain::affinity
