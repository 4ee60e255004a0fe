#include "cuda.hpp"

#include <c10/core/impl/VirtualGuardImpl.h>

#include <string>

#include "tensors.hpp"

namespace dtrain::torch_backend {

Comm& cuda_comm(Context& ctx, const at::Tensor& t, std::string_view op) {
  Comm* comm = nullptr;
  try {
    comm = &ctx.device_comm();
  } catch (const Error& e) {
    refuse(op, "tensor on " + t.device().str() +
                   ": libdtrain's NCCL communicator, which CUDA tensors need, is not available: " +
                   e.what() + "; expected CPU tensors, or use backend=\"nccl\"");
  }
  if (t.device().index() != comm->device()) {
    refuse(op,
           "tensor on " + t.device().str() + "; expected cuda:" + std::to_string(comm->device()) +
               ", the device of libdtrain's NCCL communicator (local_rank % the visible "
               "devices; torch.cuda.set_device(local_rank) and CUDA_VISIBLE_DEVICES decide it)");
  }
  // The host waits for torch's current stream: simpler than an event the NCCL stream would wait
  // on, which libdtrain's API does not offer, and DDP's buckets are ready when they are reduced.
  const c10::impl::VirtualGuardImpl cuda(c10::DeviceType::CUDA);
  cuda.getStream(t.device()).synchronize();
  return *comm;
}

void same_device(const at::Tensor& a, const at::Tensor& b, std::string_view op,
                 const std::string& what) {
  if (a.device() != b.device()) {
    refuse(op, what + ": on " + b.device().str() + "; expected " + a.device().str() +
                   " like the other tensors of the call");
  }
}

}  // namespace dtrain::torch_backend
