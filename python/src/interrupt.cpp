// Python runs signal handlers on its main thread only, so only that thread's waits check; the
// check takes the GIL (about once per 100 ms, nothing next to a wait) and lets the handlers run.
// An exception they raise (KeyboardInterrupt, or SystemExit from a user's SIGTERM handler) is
// carried through libdtrain as py::error_already_set and raised again by pybind11.
#include "interrupt.hpp"

#include <pythread.h>

#include "dtrain/interrupt.hpp"

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

void install_interrupt_check(Comm& comm) {
  const auto main_thread =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  set_interrupt_check(comm, [main_thread] {
    if (PyThread_get_thread_ident() != main_thread || finalizing()) return;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  });
}

void keep_if_abandoned(std::vector<std::unique_ptr<Buffer>>& held) {
  try {
    throw;
  } catch (const Error& e) {
    if (e.code() == Error::Code::kInvalid) return;
  } catch (...) {
  }
  for (auto& buffer : held) (void)buffer.release();  // deliberately never released
  held.clear();
}

}  // namespace dtrain::python
