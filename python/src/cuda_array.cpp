// The fields are those of https://numba.readthedocs.io/en/stable/cuda/cuda_array_interface.html:
// shape (tuple of ints), typestr (NumPy's array-interface type string), data ((pointer,
// read-only)), strides (None or bytes per dimension), mask (None), stream (v3; see docs/python.md:
// dtrain does not synchronize it, the caller has finished writing before the call).
#include "cuda_array.hpp"

#include <bit>
#include <cstdint>
#include <string_view>

namespace py = pybind11;

namespace dtrain::python {
namespace {

[[noreturn]] void malformed(const std::string& prefix, const std::string& what) {
  throw py::value_error(prefix + "__cuda_array_interface__: " + what);
}

std::optional<DType> type_of(char kind, std::size_t itemsize) {
  switch (kind) {
    case 'f':
      if (itemsize == 2) return DType::kFloat16;
      if (itemsize == 4) return DType::kFloat32;
      if (itemsize == 8) return DType::kFloat64;
      return std::nullopt;
    case 'i':
      if (itemsize == 4) return DType::kInt32;
      if (itemsize == 8) return DType::kInt64;
      return std::nullopt;
    case 'u':
      return itemsize == 1 ? std::optional(DType::kUInt8) : std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace

CudaArray read_cuda_array(py::handle obj, const std::string& prefix) {
  const py::object face = obj.attr("__cuda_array_interface__");
  if (!py::isinstance<py::dict>(face)) malformed(prefix, "expected a dict");
  const py::dict d = face.cast<py::dict>();
  for (const char* key : {"shape", "typestr", "data"}) {
    if (!d.contains(key)) malformed(prefix, std::string("no \"") + key + "\" entry");
  }
  CudaArray a;
  // typestr: byte order ('<', '>', '|', '='), kind, item size in bytes: "<f4".
  a.typestr = py::str(d["typestr"]);
  const std::string_view t = a.typestr;
  if (t.size() < 3 || std::string_view("<>|=").find(t[0]) == std::string_view::npos ||
      t.substr(2).find_first_not_of("0123456789") != std::string_view::npos) {
    malformed(prefix, "typestr \"" + a.typestr + "\"; expected e.g. \"<f4\"");
  }
  a.itemsize = std::stoul(std::string(t.substr(2)));
  const bool little = std::endian::native == std::endian::little;
  a.foreign_order = a.itemsize > 1 && ((t[0] == '>' && little) || (t[0] == '<' && !little));
  a.references = t[1] == 'O';
  if (!a.foreign_order) a.type = type_of(t[1], a.itemsize);

  const py::object data = d["data"];
  if (!py::isinstance<py::tuple>(data) || py::len(data) != 2) {
    malformed(prefix, "\"data\"; expected a tuple (pointer, read-only)");
  }
  const py::tuple pair = data.cast<py::tuple>();
  a.data = reinterpret_cast<void*>(pair[0].cast<std::uintptr_t>());
  a.readonly = pair[1].cast<bool>();

  const py::object shape_obj = d["shape"];
  if (!py::isinstance<py::tuple>(shape_obj)) malformed(prefix, "\"shape\"; expected a tuple");
  const py::tuple shape = shape_obj.cast<py::tuple>();
  std::size_t n = 1;
  for (py::handle s : shape) n *= s.cast<std::size_t>();
  a.bytes = n * a.itemsize;

  const py::object strides = d.contains("strides") ? d["strides"] : py::object(py::none());
  if (!strides.is_none() && n > 0) {
    const py::tuple st = strides.cast<py::tuple>();
    if (st.size() != shape.size()) malformed(prefix, "\"strides\" and \"shape\" differ in length");
    std::size_t expected = a.itemsize;
    for (std::size_t i = shape.size(); i-- > 0;) {
      const auto extent = shape[i].cast<std::size_t>();
      if (extent != 1 && st[i].cast<std::int64_t>() != static_cast<std::int64_t>(expected)) {
        a.contiguous = false;
      }
      expected *= extent;
    }
  }
  a.masked = d.contains("mask") && !d["mask"].is_none();
  return a;
}

}  // namespace dtrain::python
