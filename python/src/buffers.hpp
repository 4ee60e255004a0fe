// Python objects as the raw buffers libdtrain's collectives take, used in place without a copy:
// in host memory (ctx.comm()), any object with the buffer protocol (NumPy arrays, bytearray,
// memoryview) or with DLPack's __dlpack__ (torch tensors directly, JAX/CuPy arrays on the CPU); in
// one CUDA device's memory (ctx.device_comm()), an object with __dlpack__ on that device (torch,
// CuPy, JAX) or with __cuda_array_interface__ (Numba, CuPy; cuda_array.hpp). The element type
// comes from the buffer's format, DLPack type or typestr (or an explicit dtype); what libdtrain
// cannot take (the wrong memory, strided, read-only, a type it lacks) is a ValueError naming the
// argument and what is wrong with it.
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

// A held Py_buffer or DLPack capsule: the exporter keeps the memory in place (a NumPy array
// cannot be resized, a bytearray cannot grow, a tensor's storage stays alive) until this is
// destroyed, which needs the GIL.
class Buffer {
 public:
  // `what` names the argument in messages ("allreduce: out"); `dtype` overrides the format
  // (same item size), e.g. bfloat16 data held as uint16; `device` is where the memory must be: -1
  // host memory, else that CUDA device's (Comm::device()). Throws py::value_error when the buffer
  // does not fit, py::error_already_set (TypeError) when `obj` has no buffer protocol.
  Buffer(pybind11::handle obj, Access access, Typing typing, const std::string& what,
         std::optional<DType> dtype = std::nullopt, int device = -1);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  std::size_t count() const { return count_; }
  std::size_t bytes() const { return bytes_; }
  DType dtype() const { return dtype_; }

 private:
  // With data_, bytes_ and the exporter's element (`found`, `itemsize`) known: sets dtype_ and
  // count_ or throws. `name` is the exporter's element type for messages.
  void decide_type(pybind11::handle obj, std::optional<DType> found, std::size_t itemsize,
                   Typing typing, const std::string& prefix, std::optional<DType> dtype,
                   const std::string& name);
  void from_buffer_protocol(pybind11::handle obj, Access access, Typing typing,
                            const std::string& prefix, std::optional<DType> dtype);
  void from_dlpack(pybind11::handle obj, Typing typing, const std::string& prefix,
                   std::optional<DType> dtype, int device);
  void from_cuda_array(pybind11::handle obj, Access access, Typing typing,
                       const std::string& prefix, std::optional<DType> dtype, int device);

  Py_buffer view_{};
  bool has_view_ = false;
  pybind11::object capsule_;  // DLPack: its destructor gives the tensor back to the exporter
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  DType dtype_ = DType::kUInt8;
  std::size_t count_ = 0;
};

// "float32", "bfloat16", a DType, or None (nullopt). Throws py::value_error for other names.
std::optional<DType> dtype_arg(pybind11::handle value);
// The NumPy/torch name of a DType ("float32", ...).
std::string dtype_name(DType type);

}  // namespace dtrain::python
