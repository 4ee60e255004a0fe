// Numba's __cuda_array_interface__ (versions 0 to 3), the dictionary CuPy, Numba, PyTorch and JAX
// put on device arrays: read into what Buffer needs, checking only the dictionary's form here.
// Whether the memory is of the right device, the element type dtrain can take and the buffer is
// writable are Buffer's checks (buffers.cpp), with the same words as for host buffers.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <optional>
#include <string>

#include "dtrain/dtrain.hpp"

namespace dtrain::python {

struct CudaArray {
  void* data = nullptr;  // null for an empty array
  std::size_t bytes = 0;
  std::size_t itemsize = 0;
  bool readonly = false;
  bool contiguous = true;      // C order (strides absent or matching the shape)
  bool foreign_order = false;  // '>' on a little-endian machine
  bool references = false;     // typestr kind 'O': pointers to Python objects
  bool masked = false;         // a mask is given (masked arrays are not plain data)
  std::optional<DType> type;   // typestr as one of libdtrain's types
  std::string typestr;         // "<f4", for messages
};

// Reads obj.__cuda_array_interface__. Throws py::value_error naming `prefix` when it is not a
// dictionary of the documented form (shape, typestr, data = (pointer, read-only)).
CudaArray read_cuda_array(pybind11::handle obj, const std::string& prefix);

}  // namespace dtrain::python
