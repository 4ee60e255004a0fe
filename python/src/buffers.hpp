// Python objects as the raw buffers libdtrain's collectives take: any object with the buffer
// protocol (NumPy arrays, torch CPU tensors' .numpy() views, bytearray, memoryview), used in
// place without a copy. The element type comes from the buffer's format (or an explicit dtype);
// what libdtrain cannot take is a ValueError naming the argument and what is wrong with it.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <optional>
#include <string>

#include "dtrain/dtrain.hpp"

namespace dtrain::python {

// What a collective does with a buffer.
enum class Access {
  kRead,   // input only
  kWrite,  // written: a read-only buffer is refused
};

// How the element type is decided.
enum class Typing {
  kReduce,  // must be one of libdtrain's DTypes (the values are combined)
  kBytes,   // data movement only: other element types travel as bytes (uint8)
};

// A held Py_buffer: the exporter keeps the memory in place (a NumPy array cannot be resized,
// a bytearray cannot grow) until this is destroyed, which needs the GIL.
class Buffer {
 public:
  // `what` names the argument in messages ("allreduce: out"); `dtype` overrides the format
  // (same item size), e.g. bfloat16 data held as uint16. Throws py::value_error when the
  // buffer does not fit, py::error_already_set (TypeError) when `obj` has no buffer protocol.
  Buffer(pybind11::handle obj, Access access, Typing typing, const std::string& what,
         std::optional<DType> dtype = std::nullopt);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return view_.buf; }
  std::size_t count() const { return count_; }
  std::size_t bytes() const { return static_cast<std::size_t>(view_.len); }
  DType dtype() const { return dtype_; }

 private:
  Py_buffer view_{};
  DType dtype_ = DType::kUInt8;
  std::size_t count_ = 0;
};

// "float32", "bfloat16", a DType, or None (nullopt). Throws py::value_error for other names.
std::optional<DType> dtype_arg(pybind11::handle value);
// The NumPy/torch name of a DType ("float32", ...).
std::string dtype_name(DType type);

}  // namespace dtrain::python
