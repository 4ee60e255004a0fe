#include "dlpack_exporter.hpp"

#include <climits>
#include <cstring>

namespace py = pybind11;

namespace dtrain::python {
namespace {

std::string type_name(py::handle obj) { return Py_TYPE(obj.ptr())->tp_name; }

std::string repr_text(py::handle value) {
  std::string text = py::repr(value);
  // A liar's answer can be anything, a long list included: the message quotes its start.
  constexpr std::size_t kQuoted = 80;
  if (text.size() > kQuoted) text = text.substr(0, kQuoted) + "...";
  return text;
}

// An int that is not a bool (True would pass as device type 1), within an int32.
bool plain_int(py::handle v, int& out) {
  if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr())) return false;
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow != 0 || n < INT_MIN || n > INT_MAX) return false;
  out = static_cast<int>(n);
  return true;
}

[[noreturn]] void refuse(const std::string& prefix, const std::string& what,
                         const std::string& expected, py::handle obj) {
  throw py::value_error(prefix + what + "; expected " + expected +
                        " (the DLPack protocol), from a " + type_name(obj));
}

}  // namespace

std::pair<int, int> dlpack_device_of(py::handle obj, const std::string& prefix) {
  const char* expected = "a (device_type, device_id) pair of ints";
  py::object where;
  try {
    where = obj.attr("__dlpack_device__")();
  } catch (py::error_already_set& e) {
    refuse(prefix,
           "__dlpack_device__() raised " + std::string(py::str(e.type().attr("__name__"))) + ": " +
               std::string(py::str(e.value())),
           expected, obj);
  }
  std::pair<int, int> device{0, 0};
  const bool pair =
      (py::isinstance<py::tuple>(where) || py::isinstance<py::list>(where)) && py::len(where) == 2;
  if (!pair || !plain_int(where[py::int_(0)], device.first) ||
      !plain_int(where[py::int_(1)], device.second)) {
    refuse(prefix, "__dlpack_device__() returned " + repr_text(where), expected, obj);
  }
  return device;
}

py::object dlpack_capsule_of(py::handle source, py::handle obj, const std::string& prefix) {
  py::object capsule = source.attr("__dlpack__")();  // the caller words an exception
  const char* expected = "a new capsule named 'dltensor'";
  if (!PyCapsule_CheckExact(capsule.ptr())) {
    refuse(prefix, "__dlpack__() returned " + repr_text(capsule), expected, obj);
  }
  const char* name = PyCapsule_GetName(capsule.ptr());
  if (name == nullptr || std::strcmp(name, "dltensor") != 0) {
    const std::string named = name == nullptr ? "no name" : "the name '" + std::string(name) + "'";
    refuse(prefix,
           "__dlpack__() returned a capsule with " + named +
               (name != nullptr && std::strcmp(name, "used_dltensor") == 0
                    ? " (one already consumed: each call must export anew)"
                    : ""),
           expected, obj);
  }
  return capsule;
}

const dlpack::DLTensor& dltensor_of(const py::object& capsule, py::handle obj,
                                    const std::string& prefix) {
  auto* managed =
      static_cast<dlpack::DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (managed == nullptr) throw py::error_already_set();
  const dlpack::DLTensor& t = managed->dl_tensor;
  const char* expected =
      "a DLTensor with ndim >= 0, a shape of ndim extents >= 0, a data type of "
      "at least one bit and data for a non-empty tensor";
  if (t.ndim < 0) refuse(prefix, "__dlpack__() gave ndim " + std::to_string(t.ndim), expected, obj);
  if (t.ndim > 0 && t.shape == nullptr) {
    refuse(prefix, "__dlpack__() gave ndim " + std::to_string(t.ndim) + " and no shape", expected,
           obj);
  }
  bool empty = false;
  for (std::int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) {
      refuse(prefix,
             "__dlpack__() gave shape[" + std::to_string(i) + "] " + std::to_string(t.shape[i]),
             expected, obj);
    }
    empty = empty || t.shape[i] == 0;
  }
  if (t.dtype.bits == 0) refuse(prefix, "__dlpack__() gave a 0-bit data type", expected, obj);
  if (t.data == nullptr && !empty) {
    refuse(prefix, "__dlpack__() gave no data for a non-empty tensor", expected, obj);
  }
  return t;
}

}  // namespace dtrain::python
