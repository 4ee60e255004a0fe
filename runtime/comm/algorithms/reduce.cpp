// Host-side reductions (reduce.hpp).
#include <algorithm>
#include <cstdint>

#include "comm/algorithms/half.hpp"
#include "comm/algorithms/reduce.hpp"

namespace dtrain::runtime {
namespace {

// out = a op b, elementwise; `out` may be `a` or `b`.
template <typename T>
void reduce_typed(T* out, const T* a, const T* b, std::size_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<T>(a[i] + b[i]);
      return;
    case ReduceOp::kMin:
      for (std::size_t i = 0; i < n; ++i) out[i] = std::min(a[i], b[i]);
      return;
    case ReduceOp::kMax:
      for (std::size_t i = 0; i < n; ++i) out[i] = std::max(a[i], b[i]);
      return;
    case ReduceOp::kProduct:
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<T>(a[i] * b[i]);
      return;
  }
}

void reduce_16bit(std::uint16_t* out, const std::uint16_t* a, const std::uint16_t* b, std::size_t n,
                  bool half, ReduceOp op) {
  // In blocks through float, rounding once per step as a GPU does.
  constexpr std::size_t kBlock = 1024;
  float wa[kBlock];
  float wb[kBlock];
  for (std::size_t done = 0; done < n; done += kBlock) {
    const std::size_t m = std::min(kBlock, n - done);
    widen16(a + done, wa, m, half);
    widen16(b + done, wb, m, half);
    reduce_typed(wa, wa, wb, m, op);
    narrow16(wa, out + done, m, half);
  }
}

template <typename T>
void divide_typed(T* p, std::size_t n, int by) {
  const T d = static_cast<T>(by);
  for (std::size_t i = 0; i < n; ++i) p[i] /= d;
}

}  // namespace

void reduce_to(void* out, const void* a, const void* b, std::size_t n, DType type, ReduceOp op) {
  switch (type) {
    case DType::kFloat32:
      return reduce_typed(static_cast<float*>(out), static_cast<const float*>(a),
                          static_cast<const float*>(b), n, op);
    case DType::kFloat64:
      return reduce_typed(static_cast<double*>(out), static_cast<const double*>(a),
                          static_cast<const double*>(b), n, op);
    case DType::kInt32:
      return reduce_typed(static_cast<std::int32_t*>(out), static_cast<const std::int32_t*>(a),
                          static_cast<const std::int32_t*>(b), n, op);
    case DType::kInt64:
      return reduce_typed(static_cast<std::int64_t*>(out), static_cast<const std::int64_t*>(a),
                          static_cast<const std::int64_t*>(b), n, op);
    case DType::kUInt8:
      return reduce_typed(static_cast<std::uint8_t*>(out), static_cast<const std::uint8_t*>(a),
                          static_cast<const std::uint8_t*>(b), n, op);
    case DType::kFloat16:
    case DType::kBFloat16:
      return reduce_16bit(static_cast<std::uint16_t*>(out), static_cast<const std::uint16_t*>(a),
                          static_cast<const std::uint16_t*>(b), n, type == DType::kFloat16, op);
  }
}

void reduce_into(void* dst, const void* src, std::size_t n, DType type, ReduceOp op) {
  reduce_to(dst, dst, src, n, type, op);
}

void divide_by(void* buf, std::size_t n, DType type, int by) {
  switch (type) {
    case DType::kFloat32:
      return divide_typed(static_cast<float*>(buf), n, by);
    case DType::kFloat64:
      return divide_typed(static_cast<double*>(buf), n, by);
    case DType::kFloat16:
    case DType::kBFloat16: {
      auto* p = static_cast<std::uint16_t*>(buf);
      const bool half = type == DType::kFloat16;
      for (std::size_t i = 0; i < n; ++i) {
        const float x =
            (half ? half_to_float(p[i]) : bfloat16_to_float(p[i])) / static_cast<float>(by);
        p[i] = half ? float_to_half(x) : float_to_bfloat16(x);
      }
      return;
    }
    default:
      return;  // integers never average (Comm refuses kAvg for them)
  }
}

}  // namespace dtrain::runtime
