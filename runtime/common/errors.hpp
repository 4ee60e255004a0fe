// The error root of the toolkit's libraries (dtrain::plan, dtrain::rundir, dtrain::affinity, the
// SPANK plugin, the CLI). Every error they throw is one of two kinds, and the kind, not the class,
// decides what an adapter does with it: the CLI exits 2 for bad input and 1 for a failure
// (docs/errors.md), the plugin names the option or plugstack argument at fault. The classes below
// them (SpecError, PolicyError, ...) say where the error comes from; none derives from another
// only to share an exit code. libdtrain's public dtrain::Error stays apart: its Code carries the
// same distinction across the library's ABI.
#pragma once

#include <stdexcept>

namespace dtrain {

// Bad input: a spec, a flag, a file, a variable or a request the user (or an administrator) can
// fix. The message names the input, what was expected and what was got.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad command-line value or combination (a flag, an argument, a `--set` override): the input
// error of the CLI and of the pure libraries that parse its flags (dtrain::rundir's --rank and
// --since). Here rather than in the planner because every command throws it.
class UsageError : public InputError {
 public:
  using InputError::InputError;
};

// Anything else that went wrong outside the program (a scheduler command, a system call, a SPANK
// call): the input was fine, the world was not.
class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dtrain
