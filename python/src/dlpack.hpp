// The DLPack ABI (dmlc/dlpack v0.x, include/dlpack/dlpack.h), the part a consumer reads: what
// torch.Tensor.__dlpack__ (and JAX, CuPy, TensorFlow) put in their "dltensor" capsule. Declared
// here because Debian packages no dlpack header; the layout is a stable C ABI.
#pragma once

#include <cstdint>

namespace dtrain::python::dlpack {

enum DeviceType : std::int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,      // pinned host memory: the CPU reads it like any other
  kDLCUDAManaged = 13,  // cudaMallocManaged: NCCL takes it like device memory
};

enum TypeCode : std::uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
};

struct DLDevice {
  std::int32_t device_type;
  std::int32_t device_id;
};

struct DLDataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null: C-contiguous
  std::uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

}  // namespace dtrain::python::dlpack
