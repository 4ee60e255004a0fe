// Python's signal handlers, run from a C++ wait: the check that lets Ctrl-C end a wait for peers
// that may never arrive. Shared by dtrain._dtrain (interrupt.hpp, on libdtrain's Comm) and
// dtrain._torch (the process group's waits), so that both react to a signal the same way.
#pragma once

#include <functional>

namespace dtrain::python {

// A function for a waiting thread to call about every 100 ms. On the interpreter's main thread
// (the only one Python runs signal handlers on) it takes the GIL and runs the handlers; what they
// raise (KeyboardInterrupt, a SystemExit from a user's SIGTERM handler) is thrown as
// pybind11::error_already_set. Elsewhere, and while the interpreter finalizes, it does nothing.
// Make it with the GIL held.
std::function<void()> python_signal_check();

}  // namespace dtrain::python
