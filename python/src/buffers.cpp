// The format codes of PEP 3118 as NumPy writes them: "<f" or "f" for float32, "e" for float16,
// "l" or "q" for int64 (by item size), "B" for uint8. bfloat16 has no format code: it is
// recognised by the exporter's dtype name (ml_dtypes, NumPy arrays that torch made) or given as
// dtype="bfloat16".
#include "buffers.hpp"

#include <string_view>

namespace py = pybind11;

namespace dtrain::python {
namespace {

constexpr const char* kExpected = "float32, float64, float16, bfloat16, int32, int64 or uint8";

std::optional<DType> dtype_from_format(std::string_view format, Py_ssize_t itemsize) {
  if (!format.empty() && (format[0] == '@' || format[0] == '=' || format[0] == '<')) {
    format.remove_prefix(1);
  }
  if (format.size() != 1) return std::nullopt;
  switch (format[0]) {
    case 'f':
      return itemsize == 4 ? std::optional(DType::kFloat32) : std::nullopt;
    case 'd':
      return itemsize == 8 ? std::optional(DType::kFloat64) : std::nullopt;
    case 'e':
      return itemsize == 2 ? std::optional(DType::kFloat16) : std::nullopt;
    case 'B':
      return itemsize == 1 ? std::optional(DType::kUInt8) : std::nullopt;
    case 'i':
    case 'l':
    case 'q':
      if (itemsize == 4) return DType::kInt32;
      if (itemsize == 8) return DType::kInt64;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// The exporter's own name for its element type when it has one (NumPy's dtype), else the format.
std::string element_name(py::handle obj, const Py_buffer& view) {
  if (py::hasattr(obj, "dtype")) return py::str(obj.attr("dtype"));
  return std::string("format '") + (view.format != nullptr ? view.format : "B") + "'";
}

bool is_bfloat16(py::handle obj) {
  return py::hasattr(obj, "dtype") && std::string(py::str(obj.attr("dtype"))) == "bfloat16";
}

std::string type_name(py::handle obj) { return Py_TYPE(obj.ptr())->tp_name; }

}  // namespace

Buffer::Buffer(py::handle obj, Access access, Typing typing, const std::string& what,
               std::optional<DType> dtype) {
  if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_RECORDS_RO) != 0) {
    view_ = {};
    throw py::error_already_set();
  }
  // From here on the destructor would not run on a throw: release by hand.
  try {
    const std::string prefix = "dtrain: " + what + ": ";
    if (access == Access::kWrite && view_.readonly != 0) {
      throw py::value_error(prefix + "read-only; expected a writable buffer, got a read-only " +
                            type_name(obj));
    }
    if (PyBuffer_IsContiguous(&view_, 'C') == 0) {
      throw py::value_error(prefix +
                            "not contiguous; expected a C-contiguous buffer (numpy."
                            "ascontiguousarray, torch.Tensor.contiguous), got a strided " +
                            type_name(obj));
    }
    const char* format = view_.format != nullptr ? view_.format : "B";
    if (dtype) {
      if (dtype_size(*dtype) != static_cast<std::size_t>(view_.itemsize)) {
        throw py::value_error(prefix + "dtype " + dtype_name(*dtype) + " needs " +
                              std::to_string(dtype_size(*dtype)) + "-byte elements, got " +
                              element_name(obj, view_) + " of " + std::to_string(view_.itemsize) +
                              " bytes");
      }
      dtype_ = *dtype;
    } else if (auto found = dtype_from_format(format, view_.itemsize)) {
      dtype_ = *found;
    } else if (view_.itemsize == 2 && is_bfloat16(obj)) {  // after the format: a lookup per call
      dtype_ = DType::kBFloat16;
    } else if (typing == Typing::kBytes) {
      dtype_ = DType::kUInt8;
      count_ = static_cast<std::size_t>(view_.len);
      return;
    } else {
      throw py::value_error(prefix + "element type; expected " + kExpected + ", got " +
                            element_name(obj, view_));
    }
    count_ = static_cast<std::size_t>(view_.len) / dtype_size(dtype_);
  } catch (...) {
    PyBuffer_Release(&view_);
    throw;
  }
}

Buffer::~Buffer() { PyBuffer_Release(&view_); }

std::string dtype_name(DType type) { return std::string(to_string(type)); }

std::optional<DType> dtype_arg(py::handle value) {
  if (value.is_none()) return std::nullopt;
  if (py::isinstance<DType>(value)) return value.cast<DType>();
  // A numpy.dtype has a name; torch's dtypes print as "torch.float32".
  std::string name = py::isinstance<py::str>(value) || !py::hasattr(value, "name")
                         ? std::string(py::str(value))
                         : std::string(py::str(value.attr("name")));
  if (name.starts_with("torch.")) name.erase(0, 6);
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8,
                  DType::kFloat16, DType::kBFloat16}) {
    if (name == to_string(t)) return t;
  }
  throw py::value_error("dtrain: dtype; expected " + std::string(kExpected) + ", got \"" + name +
                        "\"");
}

}  // namespace dtrain::python
