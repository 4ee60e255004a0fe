// The host-side reduction kernels the backends share (TCP's rings, the shared-memory allreduce,
// MPI's recursive doubling and its float16/bfloat16 path), and the DType predicates they and the
// public Comm's checks use. Pure arithmetic over buffers: no communication.
#pragma once

#include <cstddef>

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

inline bool is_floating(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 ||
         t == DType::kBFloat16;
}
inline bool is_16bit_float(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

// Reduces `count` elements of `src` into `dst` (dst = dst op src). kAvg sums (the caller
// divides). float16/bfloat16 go through float.
void reduce_into(void* dst, const void* src, std::size_t count, DType type, ReduceOp op);
// out = a op b, elementwise, for `count` elements; `out` may alias `a` or `b`. Keeping the operand
// order fixed (the lower rank's data as `a`) gives every rank the same bits even where op is not
// symmetric in its bits (std::min/max with a NaN).
void reduce_to(void* out, const void* a, const void* b, std::size_t count, DType type, ReduceOp op);
// Divides `count` floating elements by `n` (the kAvg step). Divides rather than multiplying by
// 1/n, so an average of integer-valued data is exact whenever the quotient is representable.
void divide_by(void* buf, std::size_t count, DType type, int n);

}  // namespace dtrain::runtime
