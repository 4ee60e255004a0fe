// The shared-memory allreduce's reduction kernel (shm_allreduce.cpp): out = a op b with the bits
// reduce_to (comm/algorithms/reduce.hpp) gives, over 16-byte vectors (SSE2, NEON): each element is
// one IEEE operation, or a comparison that picks an operand as std::min and std::max do (NaN and
// signed zeros alike), the operands in the same order. Why not reduce_to itself: the build targets
// the baseline x86-64 ISA, where GCC 12 at -O2 leaves reduce_to's loops scalar (its cheap cost
// model versions no loop for aliasing nor for an unknown count), one element per cycle: 21-28 %
// of a 64 MiB allreduce's samples at 2 ranks (perf; docs/benchmarks.md). A sum or product that is
// NaN may carry another NaN's payload than reduce_to's (which operand's the hardware passes on, and
// the compiler may swap a scalar +'s operands); float16 and bfloat16 go through reduce_to.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "comm/algorithms/reduce.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {
namespace vector_detail {

template <typename T>
struct Vector {
  typedef T type __attribute__((vector_size(16)));
};

// mask ? yes : no, lane by lane (mask lanes all ones or all zeros, as a comparison gives them).
template <typename V, typename M>
inline V select(M mask, V yes, V no) {
  return std::bit_cast<V>((mask & std::bit_cast<M>(yes)) | (~mask & std::bit_cast<M>(no)));
}

template <typename T, typename Op>
inline void combine_vectors(char* out, const char* a, const char* b, std::size_t bytes,
                            Op vector_op) {
  using V = typename Vector<T>::type;
  for (std::size_t i = 0; i < bytes; i += sizeof(V)) {
    V x;
    V y;
    std::memcpy(&x, a + i, sizeof(V));
    std::memcpy(&y, b + i, sizeof(V));
    const V r = vector_op(x, y);
    std::memcpy(out + i, &r, sizeof(V));
  }
}

// The whole vectors of out = a op b; returns how many elements they hold.
template <typename T>
inline std::size_t combine_typed(char* out, const char* a, const char* b, std::size_t n,
                                 ReduceOp op) {
  using V = typename Vector<T>::type;
  const std::size_t done = n / (sizeof(V) / sizeof(T)) * (sizeof(V) / sizeof(T));
  const std::size_t bytes = done * sizeof(T);
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      combine_vectors<T>(out, a, b, bytes, [](V x, V y) -> V { return x + y; });
      return done;
    case ReduceOp::kProduct:
      combine_vectors<T>(out, a, b, bytes, [](V x, V y) -> V { return x * y; });
      return done;
    case ReduceOp::kMin:  // std::min(x, y): y where y < x, else x
      combine_vectors<T>(out, a, b, bytes, [](V x, V y) -> V { return select(y < x, y, x); });
      return done;
    case ReduceOp::kMax:  // std::max(x, y): y where x < y, else x
      combine_vectors<T>(out, a, b, bytes, [](V x, V y) -> V { return select(x < y, y, x); });
      return done;
  }
  return 0;
}

}  // namespace vector_detail

// out = a op b, elementwise, with reduce_to's bits; `out` may be `a` or `b` (a vector's operands
// are loaded before it is stored).
inline void vector_reduce(char* out, const char* a, const char* b, std::size_t n, DType type,
                          ReduceOp op) {
  std::size_t done = 0;
  switch (type) {
    case DType::kFloat32:
      done = vector_detail::combine_typed<float>(out, a, b, n, op);
      break;
    case DType::kFloat64:
      done = vector_detail::combine_typed<double>(out, a, b, n, op);
      break;
    case DType::kInt32:
      done = vector_detail::combine_typed<std::int32_t>(out, a, b, n, op);
      break;
    case DType::kInt64:
      done = vector_detail::combine_typed<std::int64_t>(out, a, b, n, op);
      break;
    case DType::kUInt8:
      done = vector_detail::combine_typed<std::uint8_t>(out, a, b, n, op);
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
      break;  // through float, in reduce_to's blocks
  }
  if (done == n) return;
  const std::size_t at = done * dtype_size(type);
  reduce_to(out + at, a + at, b + at, n - done, type, op);
}

}  // namespace dtrain::runtime
