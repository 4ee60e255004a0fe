#include "paths.hpp"

namespace py = pybind11;

namespace dtrain::python {

std::string fs_encode(py::handle path) {
  return py::module_::import("os").attr("fsencode")(path).cast<std::string>();
}

py::str fs_decode(const std::string& bytes) {
  PyObject* s =
      PyUnicode_DecodeFSDefaultAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size()));
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

}  // namespace dtrain::python
