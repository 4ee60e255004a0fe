// Python runs signal handlers on its main thread only, so only that thread's waits check; the
// check takes the GIL (about once per 100 ms, nothing next to a wait) and lets the handlers run.
#include "signal_check.hpp"

#include <pybind11/pybind11.h>
#include <pythread.h>

namespace py = pybind11;

namespace dtrain::python {
namespace {

bool finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

}  // namespace

std::function<void()> python_signal_check() {
  const auto main_thread =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  return [main_thread] {
    if (PyThread_get_thread_ident() != main_thread || finalizing()) return;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  };
}

}  // namespace dtrain::python
