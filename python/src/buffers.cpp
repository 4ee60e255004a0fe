// The format codes of PEP 3118 as NumPy writes them: "<f" or "f" for float32, "e" for float16,
// "l" or "q" for int64 (by item size), "B" for uint8. bfloat16 has no format code: it is
// recognised by the exporter's dtype name (ml_dtypes, NumPy arrays that torch made) or given as
// dtype="bfloat16".
#include "buffers.hpp"

#include <bit>
#include <string_view>
#include <utility>

#include "cuda_array.hpp"
#include "dlpack.hpp"
#include "dlpack_exporter.hpp"

namespace py = pybind11;

namespace dtrain::python {
namespace {

constexpr const char* kOrder =
    std::endian::native == std::endian::little ? "little-endian" : "big-endian";
constexpr const char* kExpected = "float32, float64, float16, bfloat16, int32, int64 or uint8";

// What a buffer's format says about its elements, read whole: the format is the one place that
// tells plain data (numbers, bytes, structs of them) from references, which would arrive at the
// other ranks as addresses in this process (a NumPy object array: the receiver then reads or
// frees the sender's pointers). A format this reader does not know is refused, not moved as
// bytes: it might hold references too.
struct Format {
  enum class Holds {
    kData,        // plain values, copyable to another process
    kReferences,  // 'O' (PyObject*), 'P', '&', 'X{}' (pointers): valid in this process only
    kUnknown,     // a code or structure outside PEP 3118
  };
  Holds holds = Holds::kData;
  bool foreign_order = false;  // a byte order other than this machine's ('>' or '!' on x86)
  std::optional<DType> type;   // one element of a libdtrain type, in this machine's byte order
};

// The syntax of Python's struct module and PEP 3118's additions, as NumPy, array, memoryview and
// ctypes write it: byte-order marks anywhere (NumPy puts one before each struct field), repeat
// counts ("10s"), sub-array shapes ("(2,3)f"), structs ("T{<i:a:<d:b:}") with field names, complex
// ("Zf"), UCS-2/UCS-4 text ("u", "w"), padding ("x").
Format read_format(std::string_view format, Py_ssize_t itemsize) {
  Format r;
  const bool big = std::endian::native == std::endian::big;
  const auto unknown = [&r] {
    r.holds = Format::Holds::kUnknown;
    return r;
  };
  int depth = 0;
  for (std::size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    if (c >= '0' && c <= '9') continue;  // a repeat count
    switch (c) {
      case '<':
        r.foreign_order = r.foreign_order || big;
        break;
      case '>':
      case '!':
        r.foreign_order = r.foreign_order || !big;
        break;
      case '(': {  // a sub-array's shape: digits and commas
        const std::size_t end = format.find(')', i);
        if (end == std::string_view::npos ||
            format.substr(i + 1, end - i - 1).find_first_not_of("0123456789, ") !=
                std::string_view::npos) {
          return unknown();
        }
        i = end;
        break;
      }
      case ':': {  // a struct field's name
        const std::size_t end = format.find(':', i + 1);
        if (end == std::string_view::npos) return unknown();
        i = end;
        break;
      }
      case 'T':
        if (i + 1 >= format.size() || format[i + 1] != '{') return unknown();
        ++depth;
        ++i;
        break;
      case '}':
        if (--depth < 0) return unknown();
        break;
      case 'Z':  // complex of e, f, d or g
        if (i + 1 >= format.size() ||
            std::string_view("efdg").find(format[i + 1]) == std::string_view::npos) {
          return unknown();
        }
        ++i;
        break;
      case 'O':
      case 'P':
      case '&':
      case 'X':  // X{...}: a function pointer
        r.holds = Format::Holds::kReferences;
        return r;
      default:
        if (std::string_view("@= xcbB?hHiIlLqQnNefdgspuw").find(c) == std::string_view::npos) {
          return unknown();
        }
    }
  }
  if (depth != 0) return unknown();
  if (r.foreign_order) return r;
  // One element of a libdtrain type: a single code after at most one byte-order mark.
  if (!format.empty() && std::string_view("@=<>!").find(format[0]) != std::string_view::npos) {
    format.remove_prefix(1);
  }
  if (format.size() != 1) return r;
  switch (format[0]) {
    case 'f':
      if (itemsize == 4) r.type = DType::kFloat32;
      break;
    case 'd':
      if (itemsize == 8) r.type = DType::kFloat64;
      break;
    case 'e':
      if (itemsize == 2) r.type = DType::kFloat16;
      break;
    case 'B':
      if (itemsize == 1) r.type = DType::kUInt8;
      break;
    case 'i':
    case 'l':
    case 'q':
      if (itemsize == 4) r.type = DType::kInt32;
      if (itemsize == 8) r.type = DType::kInt64;
      break;
    default:
      break;
  }
  return r;
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

std::string element_text(py::handle obj, const Py_buffer& view, bool has_view) {
  if (has_view) return element_name(obj, view);
  return py::hasattr(obj, "dtype") ? std::string(py::str(obj.attr("dtype"))) : "elements";
}

// "cuda:0" as torch says it, else DLPack's device type number.
std::string device_text(py::handle obj, std::pair<int, int> device) {
  if (py::hasattr(obj, "device")) return py::str(obj.attr("device"));
  return "DLPack device type " + std::to_string(device.first) + " (id " +
         std::to_string(device.second) + ")";
}

std::string cuda_name(int device) { return "cuda:" + std::to_string(device); }

// What a buffer on the wrong side says: `got` is where it is ("in host memory", "on cuda:1").
[[noreturn]] void wrong_memory(const std::string& prefix, const std::string& got, int device) {
  if (device < 0) {
    throw py::value_error(prefix + got +
                          "; expected host memory: the collectives of ctx.comm() (and ctx's own) "
                          "take host buffers; pass device buffers to ctx.device_comm()'s "
                          "collectives (NCCL), or copy to the host (.cpu(), cupy.asnumpy)");
  }
  if (got.starts_with("on cuda:")) {
    throw py::value_error(prefix + got + "; expected " + cuda_name(device) +
                          ", the device of ctx.device_comm() (local_rank % the visible devices; "
                          "set CUDA_VISIBLE_DEVICES or move the buffer with .to(\"" +
                          cuda_name(device) + "\"))");
  }
  throw py::value_error(prefix + got + "; expected memory of " + cuda_name(device) +
                        ": ctx.device_comm()'s collectives (NCCL) take CUDA device buffers "
                        "(__dlpack__ or __cuda_array_interface__); use ctx.comm() for host "
                        "buffers");
}

bool is_c_contiguous(const dlpack::DLTensor& t) {
  if (t.strides == nullptr) return true;
  std::int64_t expected = 1;
  for (std::int32_t i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

// Older torch exports bool as an 8-bit unsigned integer: its name tells them apart, since
// summing booleans as bytes is not what a caller means.
std::optional<DType> dtype_from_dlpack(py::handle obj, dlpack::DLDataType type) {
  using namespace dlpack;
  switch (type.code) {
    case kDLFloat:
      if (type.bits == 16) return DType::kFloat16;
      if (type.bits == 32) return DType::kFloat32;
      if (type.bits == 64) return DType::kFloat64;
      return std::nullopt;
    case kDLBfloat:
      return type.bits == 16 ? std::optional(DType::kBFloat16) : std::nullopt;
    case kDLInt:
      if (type.bits == 32) return DType::kInt32;
      if (type.bits == 64) return DType::kInt64;
      return std::nullopt;
    case kDLUInt:
      if (type.bits != 8) return std::nullopt;
      if (py::hasattr(obj, "dtype") && std::string(py::str(obj.attr("dtype"))).ends_with("bool")) {
        return std::nullopt;
      }
      return DType::kUInt8;
    default:
      return std::nullopt;
  }
}

}  // namespace

Buffer::Buffer(py::handle obj, Access access, Typing typing, const std::string& what,
               std::optional<DType> dtype, int device) {
  const std::string prefix = "dtrain: " + what + ": ";
  if (device >= 0) {
    // DLPack first where both are offered (torch, CuPy): it carries the device and bfloat16.
    if (py::hasattr(obj, "__dlpack__") && py::hasattr(obj, "__dlpack_device__")) {
      from_dlpack(obj, typing, prefix, dtype, device);
    } else if (py::hasattr(obj, "__cuda_array_interface__")) {
      from_cuda_array(obj, access, typing, prefix, dtype, device);
    } else {
      wrong_memory(prefix, "in host memory (a " + type_name(obj) + ")", device);
    }
    return;
  }
  // The buffer protocol first: NumPy arrays are the common case, and a lookup costs.
  if (PyObject_CheckBuffer(obj.ptr()) == 0) {
    if (py::hasattr(obj, "__dlpack__")) {
      from_dlpack(obj, typing, prefix, dtype, device);
      return;
    }
    if (py::hasattr(obj, "__cuda_array_interface__")) {
      wrong_memory(prefix, "in CUDA device memory (a " + type_name(obj) + ")", device);
    }
  }
  if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_RECORDS_RO) != 0) {
    view_ = {};
    throw py::error_already_set();
  }
  has_view_ = true;
  // From here on the destructor would not run on a throw: release by hand.
  try {
    from_buffer_protocol(obj, access, typing, prefix, dtype);
  } catch (...) {
    PyBuffer_Release(&view_);
    throw;
  }
}

void Buffer::from_buffer_protocol(py::handle obj, Access access, Typing typing,
                                  const std::string& prefix, std::optional<DType> dtype) {
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
  data_ = view_.buf;
  bytes_ = static_cast<std::size_t>(view_.len);
  const char* format = view_.format != nullptr ? view_.format : "B";
  const auto itemsize = static_cast<std::size_t>(view_.itemsize);
  const Format read = read_format(format, view_.itemsize);
  // Before anything else, whatever the typing or dtype: no collective may send references.
  if (read.holds == Format::Holds::kReferences) {
    throw py::value_error(prefix + "element type; expected plain data (numbers, bytes, structs " +
                          "of them), got " + element_name(obj, view_) +
                          ", which holds references to Python objects or pointers: addresses in "
                          "this process, meaningless in another (send bytes instead, e.g. "
                          "pickle.dumps)");
  }
  if (read.holds == Format::Holds::kUnknown) {
    std::string got = std::string("format '") + format + "'";
    if (py::hasattr(obj, "dtype")) got += " (" + std::string(py::str(obj.attr("dtype"))) + ")";
    throw py::value_error(prefix +
                          "element type; expected a buffer format of Python's struct module or "
                          "PEP 3118, got " +
                          got + ", which dtrain cannot read");
  }
  // Moved as bytes into a native array, or taken as the native type under dtype=, the values
  // would change: refused everywhere rather than only where a type is decided.
  if (read.foreign_order) {
    throw py::value_error(prefix + "byte order; expected this machine's (" + kOrder +
                          ") elements, got " + element_name(obj, view_) +
                          " (convert with a.astype(a.dtype.newbyteorder('=')))");
  }
  std::optional<DType> found = read.type;
  if (!found && !dtype && itemsize == 2 && is_bfloat16(obj)) {  // a lookup per call: last
    found = DType::kBFloat16;
  }
  // The name is looked up only for a message.
  if (dtype || found || typing == Typing::kBytes) {
    decide_type(obj, found, itemsize, typing, prefix, dtype, {});
  } else {
    decide_type(obj, found, itemsize, typing, prefix, dtype, element_name(obj, view_));
  }
}

void Buffer::from_dlpack(py::handle obj, Typing typing, const std::string& prefix,
                         std::optional<DType> dtype, int device) {
  using namespace dlpack;
  // DLPack (up to v0.8, what torch 1.13 exports) has no read-only flag: a tensor is writable.
  // The device before __dlpack__. No stream is passed to __dlpack__: the caller has finished
  // writing the data before the call (the stream contract, docs/python.md).
  if (py::hasattr(obj, "__dlpack_device__")) {
    const auto where = dlpack_device_of(obj, prefix);
    const bool host = where.first == kDLCPU || where.first == kDLCUDAHost;
    if (device < 0 && !host) wrong_memory(prefix, "on " + device_text(obj, where), device);
    if (device >= 0 && host) {
      wrong_memory(prefix,
                   "in host memory (a " + type_name(obj) + " on " + device_text(obj, where) + ")",
                   device);
    }
    if (device >= 0 && where.first != kDLCUDA && where.first != kDLCUDAManaged) {
      wrong_memory(prefix, "on " + device_text(obj, where), device);
    }
    if (device >= 0 && where.second != device) {
      wrong_memory(prefix, "on " + cuda_name(where.second), device);
    }
  }
  // A tensor that requires grad refuses __dlpack__. Its data is used as detach() gives it, the
  // same memory outside autograd, as torch.distributed and Horovod treat parameters.
  py::object source = py::reinterpret_borrow<py::object>(obj);
  if (py::hasattr(obj, "requires_grad") && py::bool_(obj.attr("requires_grad"))) {
    source = obj.attr("detach")();
  }
  try {
    capsule_ = dlpack_capsule_of(source, obj, prefix);
  } catch (py::error_already_set& e) {
    // torch 1.13 exports no bool: a view of the same bytes as uint8 moves them.
    throw py::value_error(prefix + "cannot be shared through DLPack (" +
                          std::string(py::str(e.value())) +
                          "); expected a dense tensor of a DLPack type, got a " + type_name(obj) +
                          " (a bool tensor can go as t.view(torch.uint8))");
  }
  const DLTensor& t = dltensor_of(capsule_, obj, prefix);
  std::size_t n = 1;
  for (std::int32_t i = 0; i < t.ndim; ++i) n *= static_cast<std::size_t>(t.shape[i]);
  if (!is_c_contiguous(t)) {
    throw py::value_error(prefix +
                          "not contiguous; expected a C-contiguous tensor (torch.Tensor."
                          "contiguous), got a strided " +
                          type_name(obj));
  }
  const std::size_t itemsize = (static_cast<std::size_t>(t.dtype.bits) + 7) / 8;
  data_ = static_cast<char*>(t.data) + t.byte_offset;
  bytes_ = n * itemsize;
  const std::optional<DType> found =
      t.dtype.lanes == 1 ? dtype_from_dlpack(obj, t.dtype) : std::nullopt;
  decide_type(obj, found, itemsize, typing, prefix, dtype,
              py::hasattr(obj, "dtype") ? std::string(py::str(obj.attr("dtype")))
                                        : "DLPack type code " + std::to_string(t.dtype.code) +
                                              ", " + std::to_string(t.dtype.bits) + " bits");
}

void Buffer::from_cuda_array(py::handle obj, Access access, Typing typing,
                             const std::string& prefix, std::optional<DType> dtype, int device) {
  const CudaArray a = read_cuda_array(obj, prefix);
  if (access == Access::kWrite && a.readonly) {
    throw py::value_error(prefix + "read-only; expected a writable buffer, got a read-only " +
                          type_name(obj) + " (__cuda_array_interface__ data[1] is True)");
  }
  if (!a.contiguous) {
    throw py::value_error(prefix +
                          "not contiguous; expected a C-contiguous array (cupy."
                          "ascontiguousarray, torch.Tensor.contiguous), got a strided " +
                          type_name(obj));
  }
  if (a.references || a.masked) {
    throw py::value_error(prefix + "element type; expected plain data (numbers), got typestr \"" +
                          a.typestr + "\"" + (a.masked ? " with a mask" : "") + " of a " +
                          type_name(obj));
  }
  if (a.foreign_order) {
    throw py::value_error(prefix + "byte order; expected this machine's (" + kOrder +
                          ") elements, got typestr \"" + a.typestr + "\"");
  }
  data_ = a.data;
  bytes_ = a.bytes;
  std::optional<DType> found = a.type;
  if (!found && !dtype && a.itemsize == 2 && is_bfloat16(obj)) found = DType::kBFloat16;
  decide_type(obj, found, a.itemsize, typing, prefix, dtype,
              py::hasattr(obj, "dtype") ? std::string(py::str(obj.attr("dtype")))
                                        : "typestr \"" + a.typestr + "\"");
  // Last, after the checks that need no GPU: where the memory is, asked of the CUDA runtime
  // (the interface does not say). An empty array has no memory to place.
  if (bytes_ == 0) return;
  const int where = cuda_pointer_device(data_);
  if (where < 0)
    wrong_memory(prefix, "in host memory (the pointer of a " + type_name(obj) + ")", device);
  if (where != device) wrong_memory(prefix, "on " + cuda_name(where), device);
}

void Buffer::decide_type(py::handle obj, std::optional<DType> found, std::size_t itemsize,
                         Typing typing, const std::string& prefix, std::optional<DType> dtype,
                         const std::string& name) {
  if (dtype) {
    if (dtype_size(*dtype) != itemsize) {
      throw py::value_error(prefix + "dtype " + dtype_name(*dtype) + " needs " +
                            std::to_string(dtype_size(*dtype)) + "-byte elements, got " +
                            (name.empty() ? element_text(obj, view_, has_view_) : name) + " of " +
                            std::to_string(itemsize) + " bytes");
    }
    dtype_ = *dtype;
  } else if (found) {
    dtype_ = *found;
  } else if (typing == Typing::kBytes) {
    dtype_ = DType::kUInt8;
    count_ = bytes_;
    return;
  } else {
    throw py::value_error(prefix + "element type; expected " + kExpected + ", got " + name);
  }
  count_ = bytes_ / dtype_size(dtype_);
}

Buffer::~Buffer() {
  if (has_view_) PyBuffer_Release(&view_);
}

std::string dtype_name(DType type) { return std::string(to_string(type)); }

std::optional<DType> dtype_arg(py::handle value) {
  if (value.is_none()) return std::nullopt;
  if (py::isinstance<DType>(value)) return value.cast<DType>();
  // numpy.dtype(">f4").name is "float32": its byte order would be lost. NumPy writes "=" for this
  // machine's order, "|" where order does not apply.
  if (!py::isinstance<py::str>(value) && py::hasattr(value, "byteorder")) {
    const std::string order = py::str(value.attr("byteorder"));
    const bool little = std::endian::native == std::endian::little;
    if ((order == ">" && little) || (order == "<" && !little)) {
      throw py::value_error("dtrain: dtype; expected this machine's (" + std::string(kOrder) +
                            ") byte order, got " + std::string(py::str(value)));
    }
  }
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
