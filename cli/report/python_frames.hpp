// The Python frames of a rank running CPython, read from its memory without its help (the way
// py-spy does; Debian has no py-spy, and gdb's `py-bt` needs the interpreter's exact debug
// symbols): from the interpreter's _PyRuntime, each thread's chain of frames, each frame's code
// object's name and file. Pure: the reads go through `Memory` (cli/python_stacks.hpp reads another
// process's memory with process_vm_readv); the layout is CPython 3.11's (x86-64 and arm64 alike),
// checked against the process's own Py_Version before anything is read. Every loop is bounded: a
// process that runs while it is read (a torn chain) yields fewer frames, never a hang.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dtrain::report {

// Reads `size` bytes at `address` of the process into `out`; false when they cannot be read.
using Memory = std::function<bool(std::uint64_t address, void* out, std::size_t size)>;

// The first frame of each Python thread in a rank's stacks (report/stack_tree.hpp), so that the
// merged tree shows the Python frames as a branch of their own beside the native threads.
inline constexpr std::string_view kPythonThreadRoot = "(Python)";

// Whether the interpreter whose Py_Version (PY_VERSION_HEX) is `version` has the layout read here.
bool python_layout_known(std::uint64_t version);
// "3.11" from a PY_VERSION_HEX.
std::string python_version_text(std::uint64_t version);

// The threads of the interpreter whose _PyRuntime is at `runtime`: each is kPythonThreadRoot and
// then its frames, outermost first, each "function (file.py)" (the file's last path component);
// the main thread last, as CPython lists the newest thread first. Empty when nothing could be
// read. At most 64 threads of 256 frames.
std::vector<std::vector<std::string>> read_python_threads(const Memory& memory,
                                                          std::uint64_t runtime);

}  // namespace dtrain::report
