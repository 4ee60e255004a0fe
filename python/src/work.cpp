#include "work.hpp"

#include "interrupt.hpp"

namespace py = pybind11;

namespace dtrain::python {

PyWork::~PyWork() {
  if (done_) return;
  try {
    py::gil_scoped_release release;
    work_.wait();
  } catch (py::error_already_set& e) {
    // A destructor cannot raise, but a Ctrl-C that ended this wait must not be lost: it is
    // signalled again, and the interpreter raises it at its next check. (The GIL is back here.)
    keep_if_abandoned(held_);
    if (e.matches(PyExc_KeyboardInterrupt)) PyErr_SetInterrupt();
  } catch (...) {
    // A destructor cannot raise; the error was the caller's to collect with wait().
    keep_if_abandoned(held_);
  }
}

void PyWork::finish() {
  done_ = true;
  held_.clear();
}

py::object PyWork::wait() {
  if (done_) return result_;
  try {
    py::gil_scoped_release release;
    work_.wait();
  } catch (...) {
    keep_if_abandoned(held_);
    finish();
    throw;
  }
  finish();
  return result_;
}

bool PyWork::test() {
  if (done_) return true;
  bool complete = false;
  try {
    complete = work_.test();
  } catch (...) {
    finish();
    throw;
  }
  if (complete) finish();
  return complete;
}

}  // namespace dtrain::python
