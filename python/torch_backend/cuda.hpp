// CUDA tensors in dtrain.torch: their collectives go through the process group's Context's NCCL
// communicator (Context::device_comm()), created by the first collective on a CUDA tensor, which
// every rank makes at the same point (torch's collectives are called in the same order on all).
// Built against any torch, CUDA or not: torch's CUDA streams are reached through c10's
// device-generic interface (c10::impl::VirtualGuardImpl), which libtorch_cuda fills at run time.
#pragma once

#include <ATen/core/Tensor.h>

#include <string_view>

#include "dtrain/dtrain.hpp"

namespace dtrain::torch_backend {

// The device communicator for CUDA tensor `t` of collective `op`, after waiting on the host for
// torch's current stream on t's device: NCCL runs on libdtrain's own stream, which waits for no
// stream of torch's, so the kernels that wrote `t` must be done first (docs/python.md, "PyTorch
// backend"). Throws Error (kInvalid, through refuse()) when the NCCL communicator cannot be made,
// with libdtrain's reason (built without NCCL, libnccl or libcudart not loadable, no GPU visible to
// it), or when `t` is on another device than the communicator's.
Comm& cuda_comm(Context& ctx, const at::Tensor& t, std::string_view op);

// `b` on the same device as `a` (`what` names `b`), else refuse().
void same_device(const at::Tensor& a, const at::Tensor& b, std::string_view op,
                 const std::string& what);

}  // namespace dtrain::torch_backend
