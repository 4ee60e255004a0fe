#include "numbers.hpp"

namespace py = pybind11;

namespace dtrain::python {
namespace {

// The int behind `value`, or null (with no Python error set) when it is not one.
py::object as_int(py::handle value) {
  if (PyBool_Check(value.ptr()) || PyIndex_Check(value.ptr()) == 0) return {};
  py::object number = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!number) throw py::error_already_set();
  return number;
}

}  // namespace

std::optional<long long> int_in(py::handle value, long long low, long long high) {
  const py::object number = as_int(value);
  if (!number) return std::nullopt;
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
  if (n == -1 && PyErr_Occurred() != nullptr) throw py::error_already_set();
  if (overflow != 0 || n < low || n > high) return std::nullopt;
  return n;
}

std::optional<std::uint64_t> uint64_of(py::handle value) {
  const py::object number = as_int(value);
  if (!number) return std::nullopt;
  const unsigned long long n = PyLong_AsUnsignedLongLong(number.ptr());
  if (n == static_cast<unsigned long long>(-1) && PyErr_Occurred() != nullptr) {
    PyErr_Clear();  // negative or above 2^64 - 1
    return std::nullopt;
  }
  return n;
}

}  // namespace dtrain::python
