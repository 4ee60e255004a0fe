// dtrain.Error and one subclass per dtrain::Error::Code, whose class attribute `code` is the
// code's name, so Python code can catch a kind of failure (`except dtrain.TimeoutError`). The
// classes are made with PyErr_NewException so that they can also derive from the builtin class
// that fits (ValueError for a bad argument, TimeoutError for a deadline): `except ValueError`
// then catches dtrain's argument errors too.
#include "bindings.hpp"

#include <array>

#include "dtrain/dtrain.hpp"

namespace py = pybind11;

namespace dtrain::python {
namespace {

struct ErrorClass {
  Error::Code code;
  const char* name;  // the class name in the module
  const char* code_name;
  PyObject* builtin;  // the second base, or nullptr
  PyObject* type = nullptr;
};

// `type` is filled at import; the module keeps the classes alive.
std::array<ErrorClass, 5> classes = {{
    {Error::Code::kInvalid, "InvalidError", "invalid", PyExc_ValueError},
    {Error::Code::kComm, "CommError", "comm", nullptr},
    {Error::Code::kSystem, "SysError", "system", PyExc_OSError},
    {Error::Code::kInternal, "InternalError", "internal", nullptr},
    {Error::Code::kTimeout, "TimeoutError", "timeout", PyExc_TimeoutError},
}};
PyObject* base_error = nullptr;

void raise(const Error& e) {
  for (const auto& c : classes) {
    if (c.code != e.code()) continue;
    PyErr_SetString(c.type, e.what());
    return;
  }
  PyErr_SetString(base_error, e.what());
}

}  // namespace

void bind_errors(py::module_& m) {
  py::dict no_code;
  no_code["code"] = py::none();
  base_error = PyErr_NewExceptionWithDoc(
      "dtrain.Error",
      "Every error libdtrain raises; `code` is 'invalid', 'comm', 'system', 'internal' or "
      "'timeout' (dtrain::Error::Code).",
      PyExc_RuntimeError, no_code.ptr());
  if (base_error == nullptr) throw py::error_already_set();
  m.add_object("Error", py::reinterpret_steal<py::object>(base_error));
  for (auto& c : classes) {
    py::tuple bases = c.builtin != nullptr
                          ? py::make_tuple(py::handle(base_error), py::handle(c.builtin))
                          : py::make_tuple(py::handle(base_error));
    const std::string qualified = std::string("dtrain.") + c.name;
    py::dict attributes;
    attributes["code"] = c.code_name;
    c.type = PyErr_NewException(qualified.c_str(), bases.ptr(), attributes.ptr());
    if (c.type == nullptr) throw py::error_already_set();
    m.add_object(c.name, py::reinterpret_steal<py::object>(c.type));
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      raise(e);
    }
  });
}

}  // namespace dtrain::python
