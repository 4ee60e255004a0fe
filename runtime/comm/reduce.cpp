// Host-side reductions (the TCP backend reduces in its own buffers; MPI does its own).
#include <algorithm>
#include <cstdint>

#include "comm/communicator.hpp"
#include "comm/half.hpp"

namespace dtrain::runtime {
namespace {

template <typename T>
void reduce_typed(T* dst, const T* src, std::size_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] + src[i]);
      return;
    case ReduceOp::kMin:
      for (std::size_t i = 0; i < n; ++i) dst[i] = std::min(dst[i], src[i]);
      return;
    case ReduceOp::kMax:
      for (std::size_t i = 0; i < n; ++i) dst[i] = std::max(dst[i], src[i]);
      return;
    case ReduceOp::kProduct:
      for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] * src[i]);
      return;
  }
}

void reduce_16bit(std::uint16_t* dst, const std::uint16_t* src, std::size_t n, bool half,
                  ReduceOp op) {
  // In blocks through float, rounding once per step as a GPU does.
  constexpr std::size_t kBlock = 1024;
  float a[kBlock];
  float b[kBlock];
  for (std::size_t done = 0; done < n; done += kBlock) {
    const std::size_t m = std::min(kBlock, n - done);
    widen16(dst + done, a, m, half);
    widen16(src + done, b, m, half);
    reduce_typed(a, b, m, op);
    narrow16(a, dst + done, m, half);
  }
}

template <typename T>
void divide_typed(T* p, std::size_t n, int by) {
  const T d = static_cast<T>(by);
  for (std::size_t i = 0; i < n; ++i) p[i] /= d;
}

}  // namespace

void reduce_into(void* dst, const void* src, std::size_t n, DType type, ReduceOp op) {
  switch (type) {
    case DType::kFloat32:
      return reduce_typed(static_cast<float*>(dst), static_cast<const float*>(src), n, op);
    case DType::kFloat64:
      return reduce_typed(static_cast<double*>(dst), static_cast<const double*>(src), n, op);
    case DType::kInt32:
      return reduce_typed(static_cast<std::int32_t*>(dst), static_cast<const std::int32_t*>(src), n,
                          op);
    case DType::kInt64:
      return reduce_typed(static_cast<std::int64_t*>(dst), static_cast<const std::int64_t*>(src), n,
                          op);
    case DType::kUInt8:
      return reduce_typed(static_cast<std::uint8_t*>(dst), static_cast<const std::uint8_t*>(src), n,
                          op);
    case DType::kFloat16:
    case DType::kBFloat16:
      return reduce_16bit(static_cast<std::uint16_t*>(dst), static_cast<const std::uint16_t*>(src),
                          n, type == DType::kFloat16, op);
  }
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
