// dtrain::Comm: argument checks shared by every backend, then a virtual call. Also the small
// DType/ReduceOp helpers.
#include "comm/communicator.hpp"

#include <functional>
#include <string>

namespace dtrain {

std::size_t dtype_size(DType type) {
  switch (type) {
    case DType::kFloat32:
    case DType::kInt32:
      return 4;
    case DType::kFloat64:
    case DType::kInt64:
      return 8;
  }
  throw Error(Error::Code::kInvalid,
              "dtrain: dtype: unknown value; expected kFloat32, kFloat64, kInt32 or kInt64, got " +
                  std::to_string(static_cast<int>(type)));
}

std::string_view to_string(DType type) {
  switch (type) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
  }
  return "unknown";
}

std::string_view to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "kSum";
    case ReduceOp::kAvg:
      return "kAvg";
    case ReduceOp::kMin:
      return "kMin";
    case ReduceOp::kMax:
      return "kMax";
  }
  return "unknown";
}

namespace {

// Throws Error (kInvalid) for an op the type does not support: kAvg on integers.
void check_reduce(DType type, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMin:
    case ReduceOp::kMax:
      return;
    case ReduceOp::kAvg:
      // An integer average would have to round, and every rank would silently lose the
      // remainder; the caller should sum and divide as it sees fit.
      if (type == DType::kFloat32 || type == DType::kFloat64) return;
      throw Error(Error::Code::kInvalid,
                  "dtrain: allreduce: kAvg is defined for floating types; "
                  "expected float32 or float64 (or kSum), got " +
                      std::string(to_string(type)));
  }
  throw Error(Error::Code::kInvalid,
              "dtrain: allreduce: unknown reduce op; expected kSum, kAvg, kMin or kMax, got " +
                  std::to_string(static_cast<int>(op)));
}

void require_buffer(const void* p, std::size_t count, const char* op, const char* which) {
  if (p == nullptr && count > 0) {
    throw Error(Error::Code::kInvalid, std::string("dtrain: ") + op + ": " + which +
                                           " buffer; expected a pointer to " +
                                           std::to_string(count) + " elements, got null");
  }
}

}  // namespace

void Comm::allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op) {
  const std::size_t bytes = count * dtype_size(type);
  check_reduce(type, op);
  require_buffer(in, count, "allreduce", "input");
  require_buffer(out, count, "allreduce", "output");
  if (in != out && count > 0) {
    // MPI (and memcpy) leave partly overlapping buffers undefined; only exact in-place is safe.
    // std::less gives a total order on unrelated pointers, where < would not.
    const auto* a = static_cast<const char*>(in);
    const auto* b = static_cast<const char*>(out);
    const std::less<const char*> before;
    if (before(a, b + bytes) && before(b, a + bytes)) {
      throw Error(Error::Code::kInvalid,
                  "dtrain: allreduce: input and output overlap; expected the same buffer (in "
                  "place) or disjoint ones");
    }
  }
  impl_->allreduce(in, out, count, type, op);
}

void Comm::broadcast(void* buf, std::size_t count, DType type, int root) {
  (void)dtype_size(type);  // rejects an unknown type before a backend sees it
  require_buffer(buf, count, "broadcast", "data");
  if (root < 0 || root >= world_size_) {
    throw Error(Error::Code::kInvalid, "dtrain: broadcast: root rank out of range; expected 0 to " +
                                           std::to_string(world_size_ - 1) + ", got " +
                                           std::to_string(root));
  }
  impl_->broadcast(buf, count, type, root);
}

void Comm::barrier() { impl_->barrier(); }

std::string_view Comm::backend() const { return impl_->backend(); }

void Comm::throw_size_mismatch(std::size_t in, std::size_t out) {
  throw Error(Error::Code::kInvalid,
              "dtrain: allreduce: output size differs from input size; expected " +
                  std::to_string(in) + " elements, got " + std::to_string(out));
}

}  // namespace dtrain
