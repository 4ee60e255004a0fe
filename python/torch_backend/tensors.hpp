// What dtrain.torch's process group checks in the tensors torch hands it, and how a torch element
// type and reduction become libdtrain's: the one place they are mapped, so every collective refuses
// the same tensors with the same words.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace dtrain::torch_backend {

// torch's element type as libdtrain reduces it; nullopt for the others (int8, int16, bool,
// complex, ...).
std::optional<DType> dtype_of(c10::ScalarType type);

// "torch.float32", as Python prints the dtype, for messages.
std::string torch_name(c10::ScalarType type);

// A tensor's memory as a collective reads or writes it.
struct Buffer {
  void* data;
  std::size_t count;  // elements of `type`
  DType type;
};

// Where a collective's tensors may be: the CPU only (the operations that stage data in CPU
// scratch tensors), or the CPU or a CUDA device (those whose tensors NCCL reads and writes as they
// are: all_reduce, broadcast, all_gather_into_tensor, reduce_scatter_tensor).
enum class Placement { kCpu, kCpuOrCuda };

// For a reduction (allreduce, reduce_scatter, reduce): a dense, contiguous tensor of a type
// libdtrain reduces, on the CPU (or CUDA, by `where`). Throws Error (kInvalid) naming the
// operation, the argument and the fault:
// `dtrain: torch: allreduce: tensor: element type; expected float32, ..., got torch.int16`.
Buffer reduced(const at::Tensor& t, std::string_view op, std::string_view arg,
               Placement where = Placement::kCpu);

// For an operation that only moves bytes (broadcast, allgather): any element type, as bytes
// (kUInt8), else the same checks as reduced().
Buffer moved(const at::Tensor& t, std::string_view op, std::string_view arg,
             Placement where = Placement::kCpu);

// torch's reduction as libdtrain's. Throws Error (kInvalid) for the bitwise ones and PREMUL_SUM,
// naming them.
ReduceOp reduce_op(const c10d::ReduceOp& op, std::string_view collective);

// "dtrain: torch: OP: WHAT; expected ..., got ...": an Error (kInvalid) for a call torch allows
// but this backend does not take (several tensors per call, mismatched sizes).
[[noreturn]] void refuse(std::string_view op, const std::string& what);

// The argument checks of the collectives, each refusing (refuse()) what it names:
// exactly one tensor per call;
at::Tensor& only(std::vector<at::Tensor>& tensors, std::string_view op);
// `b` of `a`'s element type and count (`what` names `b`);
void same_shape(const at::Tensor& a, const at::Tensor& b, std::string_view op, const char* what);
// one list of one tensor per rank (allgather's outputs, reduce_scatter's inputs);
std::vector<at::Tensor>& per_rank(std::vector<std::vector<at::Tensor>>& lists, int size,
                                  std::string_view op, const char* what);
// `size` tensors of one element type and count (alltoall's lists): the bytes of each.
std::size_t equal_blocks(const std::vector<at::Tensor>& list, int size, std::string_view op,
                         const char* what);
std::size_t bytes_of(const at::Tensor& t);
// "[1, 2, 3]": split sizes in a refusal.
std::string splits_text(const std::vector<std::int64_t>& splits);

}  // namespace dtrain::torch_backend
