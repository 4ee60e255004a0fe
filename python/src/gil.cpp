#include "gil.hpp"

#include <pybind11/pybind11.h>

namespace dtrain::python {

void without_gil(const std::function<void()>& wait) {
  // PyGILState_Check: whether this thread holds the GIL (0 for a thread Python never saw).
  if (Py_IsInitialized() == 0 || PyGILState_Check() == 0) {
    wait();
    return;
  }
  pybind11::gil_scoped_release nogil;
  wait();
}

}  // namespace dtrain::python
