#include "tensors.hpp"

#include <sstream>

namespace dtrain::torch_backend {
namespace {

// The types of dtrain::DType, in the order docs/python.md lists them.
constexpr std::string_view kReducible =
    "float32, float64, float16, bfloat16, int32, int64 or uint8";

void check_placement(const at::Tensor& t, std::string_view op, std::string_view arg,
                     Placement where) {
  if (!t.defined()) refuse(op, std::string(arg) + ": undefined; expected a tensor, got none");
  if (t.device().is_cuda() && where == Placement::kCpu) {
    refuse(op, std::string(arg) + ": on " + t.device().str() +
                   "; expected a CPU tensor: CUDA tensors go through libdtrain's NCCL "
                   "communicator for all_reduce, broadcast, all_gather_into_tensor and "
                   "reduce_scatter_tensor only (use those, backend=\"nccl\", or .cpu())");
  }
  if (!t.device().is_cpu() && !t.device().is_cuda()) {
    refuse(op, std::string(arg) + ": on " + t.device().str() +
                   "; expected a CPU tensor (or a CUDA one, through libdtrain's NCCL "
                   "communicator)");
  }
  if (t.layout() != c10::kStrided) {
    std::ostringstream layout;
    layout << t.layout();
    refuse(op, std::string(arg) + ": layout " + layout.str() +
                   "; expected a dense (strided) tensor (tensor.to_dense())");
  }
  if (!t.is_contiguous()) {
    std::ostringstream shape;
    shape << "sizes " << t.sizes() << ", strides " << t.strides();
    refuse(op, std::string(arg) + ": not contiguous (" + shape.str() +
                   "); expected a contiguous tensor (tensor.contiguous())");
  }
}

}  // namespace

std::optional<DType> dtype_of(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::Float:
      return DType::kFloat32;
    case c10::ScalarType::Double:
      return DType::kFloat64;
    case c10::ScalarType::Half:
      return DType::kFloat16;
    case c10::ScalarType::BFloat16:
      return DType::kBFloat16;
    case c10::ScalarType::Int:
      return DType::kInt32;
    case c10::ScalarType::Long:
      return DType::kInt64;
    case c10::ScalarType::Byte:
      return DType::kUInt8;
    default:
      return std::nullopt;
  }
}

std::string torch_name(c10::ScalarType type) {
  // c10's names are the C++ ones ("Float", "BFloat16"); a Python user knows torch.float32.
  switch (type) {
    case c10::ScalarType::Float:
      return "torch.float32";
    case c10::ScalarType::Double:
      return "torch.float64";
    case c10::ScalarType::Half:
      return "torch.float16";
    case c10::ScalarType::BFloat16:
      return "torch.bfloat16";
    case c10::ScalarType::Int:
      return "torch.int32";
    case c10::ScalarType::Long:
      return "torch.int64";
    case c10::ScalarType::Byte:
      return "torch.uint8";
    case c10::ScalarType::Char:
      return "torch.int8";
    case c10::ScalarType::Short:
      return "torch.int16";
    case c10::ScalarType::Bool:
      return "torch.bool";
    case c10::ScalarType::ComplexFloat:
      return "torch.complex64";
    case c10::ScalarType::ComplexDouble:
      return "torch.complex128";
    default:
      return std::string("torch ") + c10::toString(type);
  }
}

Buffer reduced(const at::Tensor& t, std::string_view op, std::string_view arg, Placement where) {
  check_placement(t, op, arg, where);
  const std::optional<DType> type = dtype_of(t.scalar_type());
  if (!type) {
    refuse(op, std::string(arg) + ": element type; expected " + std::string(kReducible) + ", got " +
                   torch_name(t.scalar_type()));
  }
  return {t.data_ptr(), static_cast<std::size_t>(t.numel()), *type};
}

Buffer moved(const at::Tensor& t, std::string_view op, std::string_view arg, Placement where) {
  check_placement(t, op, arg, where);
  return {t.data_ptr(), static_cast<std::size_t>(t.numel()) * t.element_size(), DType::kUInt8};
}

ReduceOp reduce_op(const c10d::ReduceOp& op, std::string_view collective) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
      return ReduceOp::kSum;
    case c10d::ReduceOp::AVG:
      return ReduceOp::kAvg;
    case c10d::ReduceOp::PRODUCT:
      return ReduceOp::kProduct;
    case c10d::ReduceOp::MIN:
      return ReduceOp::kMin;
    case c10d::ReduceOp::MAX:
      return ReduceOp::kMax;
    case c10d::ReduceOp::BAND:
      refuse(collective, "op: ReduceOp.BAND; expected SUM, AVG, PRODUCT, MIN or MAX");
    case c10d::ReduceOp::BOR:
      refuse(collective, "op: ReduceOp.BOR; expected SUM, AVG, PRODUCT, MIN or MAX");
    case c10d::ReduceOp::BXOR:
      refuse(collective, "op: ReduceOp.BXOR; expected SUM, AVG, PRODUCT, MIN or MAX");
    case c10d::ReduceOp::PREMUL_SUM:
      refuse(collective, "op: ReduceOp.PREMUL_SUM; expected SUM, AVG, PRODUCT, MIN or MAX");
    default:
      break;
  }
  refuse(collective, "op: ReduceOp " + std::to_string(static_cast<int>(op.op_)) +
                         "; expected SUM, AVG, PRODUCT, MIN or MAX");
}

void refuse(std::string_view op, const std::string& what) {
  throw Error(Error::Code::kInvalid, "dtrain: torch: " + std::string(op) + ": " + what);
}

at::Tensor& only(std::vector<at::Tensor>& tensors, std::string_view op) {
  if (tensors.size() != 1) {
    refuse(op, "tensors: " + std::to_string(tensors.size()) +
                   " tensors; expected 1 (one CPU tensor per call)");
  }
  return tensors[0];
}

void same_shape(const at::Tensor& a, const at::Tensor& b, std::string_view op, const char* what) {
  if (a.scalar_type() != b.scalar_type() || a.numel() != b.numel()) {
    refuse(op, std::string(what) + ": " + torch_name(b.scalar_type()) + " of " +
                   std::to_string(b.numel()) + " elements; expected " +
                   torch_name(a.scalar_type()) + " of " + std::to_string(a.numel()) +
                   " elements, like the input");
  }
}

// A list of one tensor per rank (allgather's outputs, reduce_scatter's inputs).
std::vector<at::Tensor>& per_rank(std::vector<std::vector<at::Tensor>>& lists, int size,
                                  std::string_view op, const char* what) {
  if (lists.size() != 1) {
    refuse(op, std::string(what) + ": " + std::to_string(lists.size()) +
                   " lists; expected 1 (one list of CPU tensors per call)");
  }
  if (lists[0].size() != static_cast<std::size_t>(size)) {
    refuse(op, std::string(what) + ": " + std::to_string(lists[0].size()) +
                   " tensors; expected one per rank, " + std::to_string(size));
  }
  return lists[0];
}

std::size_t bytes_of(const at::Tensor& t) {
  return static_cast<std::size_t>(t.numel()) * t.element_size();
}

std::string splits_text(const std::vector<std::int64_t>& splits) {
  std::string text;
  for (const std::int64_t s : splits) text += (text.empty() ? "[" : ", ") + std::to_string(s);
  return text + "]";
}

// A list of `size` tensors of one element type and element count (alltoall's lists).
std::size_t equal_blocks(const std::vector<at::Tensor>& list, int size, std::string_view op,
                         const char* what) {
  if (list.size() != static_cast<std::size_t>(size)) {
    refuse(op, std::string(what) + ": " + std::to_string(list.size()) +
                   " tensors; expected one per rank, " + std::to_string(size));
  }
  for (std::size_t r = 0; r < list.size(); ++r) {
    const std::string arg = std::string(what) + "[" + std::to_string(r) + "]";
    moved(list[r], op, arg);
    if (r > 0 &&
        (list[r].scalar_type() != list[0].scalar_type() || list[r].numel() != list[0].numel())) {
      refuse(op, arg + ": " + torch_name(list[r].scalar_type()) + " of " +
                     std::to_string(list[r].numel()) + " elements; expected " +
                     torch_name(list[0].scalar_type()) + " of " + std::to_string(list[0].numel()) +
                     " like " + what + "[0] (dtrain's all_to_all moves equal blocks only)");
    }
  }
  return bytes_of(list[0]);
}

}  // namespace dtrain::torch_backend
