// The Python frames of a rank's process, for `dtrain stacks` and the hang watch's stacks
// (stack_capture.hpp): the interpreter's _PyRuntime and Py_Version found in the ELF symbols of
// the executable or libpython the process maps, its memory read with process_vm_readv (as a
// debugger may: the same user, ptrace_scope permitting), the frames walked by
// report/python_frames.hpp. No debugger, no signal, nothing stopped: a stopped rank is read as it
// is, and the reads take microseconds.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dtrain::cli {

struct PythonStacks {
  // Each thread's Python frames, report/python_frames.hpp's read_python_threads.
  std::vector<std::vector<std::string>> threads;
  // Why there are none ("Python 3.12: only 3.11's frames are read here", "its memory cannot be
  // read: Operation not permitted"); empty when `threads` holds them.
  std::string problem;
};

// nullopt when process `pid` runs no CPython (no _PyRuntime symbol in what it maps).
std::optional<PythonStacks> python_stacks(long pid);

}  // namespace dtrain::cli
