#include "paths.hpp"

namespace py = pybind11;

namespace dtrain::python {

std::string fs_encode(py::handle path, const std::string& what) {
  if (!py::isinstance<py::str>(path) && !py::isinstance<py::bytes>(path) &&
      !py::hasattr(path, "__fspath__")) {
    throw py::type_error("dtrain: " + what + ": expected a path (str, bytes or os.PathLike), got " +
                         std::string(Py_TYPE(path.ptr())->tp_name));
  }
  auto bytes = py::module_::import("os").attr("fsencode")(path).cast<std::string>();
  if (const std::size_t nul = bytes.find('\0'); nul != std::string::npos) {
    throw py::value_error("dtrain: " + what + ": NUL byte at position " + std::to_string(nul) +
                          "; expected a path without NUL bytes, got " +
                          std::string(py::repr(path)));
  }
  return bytes;
}

py::str fs_decode(const std::string& bytes) {
  PyObject* s =
      PyUnicode_DecodeFSDefaultAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size()));
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

}  // namespace dtrain::python
