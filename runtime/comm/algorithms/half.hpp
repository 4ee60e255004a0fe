// float16 and bfloat16 on the host. MPI has no 16-bit floating type and C++20 has none either, so
// libdtrain reduces these in float: widen, reduce, round back (round to nearest even). The sum of
// integer-valued halves is then exact whenever the result is representable, as on a GPU.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace dtrain::runtime {

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits = 0;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf, nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal half: normalize into a float.
    std::uint32_t e = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mant & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

inline std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan (a nan stays a quiet nan)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero): shift the implicit-one mantissa into place, round to even.
    if (abs < 0x33000000u) return sign;
    const std::uint32_t e = abs >> 23;
    const std::uint32_t m = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - e;  // 14 + (113 - e)
    std::uint32_t h = m >> shift;
    const std::uint32_t rest = m & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1u);
    if (rest > half || (rest == half && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = ((abs >> 23) - 112u) << 10 | ((abs >> 13) & 0x3ffu);
  const std::uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: fine
  return static_cast<std::uint16_t>(sign | h);
}

inline float bfloat16_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

inline std::uint16_t float_to_bfloat16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

// Widens `count` 16-bit values (float16 when `is_half`, else bfloat16) into `out`.
inline void widen16(const std::uint16_t* in, float* out, std::size_t count, bool is_half) {
  if (is_half) {
    for (std::size_t i = 0; i < count; ++i) out[i] = half_to_float(in[i]);
  } else {
    for (std::size_t i = 0; i < count; ++i) out[i] = bfloat16_to_float(in[i]);
  }
}

inline void narrow16(const float* in, std::uint16_t* out, std::size_t count, bool is_half) {
  if (is_half) {
    for (std::size_t i = 0; i < count; ++i) out[i] = float_to_half(in[i]);
  } else {
    for (std::size_t i = 0; i < count; ++i) out[i] = float_to_bfloat16(in[i]);
  }
}

}  // namespace dtrain::runtime
