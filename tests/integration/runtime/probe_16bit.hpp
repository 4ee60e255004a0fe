// The probe's own 16-bit float conversions, independent of libdtrain's (runtime_probe checks
// libdtrain's float16 and bfloat16 sums against them): bits of small integers and back, exact for
// the values the probe uses, and any float16 as a double.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace dtrain::probe {

// IEEE binary16 / bfloat16 bits of small integers and back, independent of libdtrain's own
// conversion (exact for the integer values used here).
inline std::uint16_t half_bits(double x) {
  if (x == 0) return 0;
  const bool neg = x < 0;
  double a = neg ? -x : x;
  int e = 0;
  while (a >= 2) {
    a /= 2;
    ++e;
  }
  const auto mant = static_cast<std::uint16_t>((a - 1) * 1024);
  return static_cast<std::uint16_t>((neg ? 0x8000 : 0) | ((e + 15) << 10) | mant);
}
inline double half_value(std::uint16_t h) {
  if ((h & 0x7fff) == 0) return 0;
  const int e = ((h >> 10) & 0x1f) - 15;
  double v = 1 + (h & 0x3ff) / 1024.0;
  for (int i = 0; i < e; ++i) v *= 2;
  return (h & 0x8000) ? -v : v;
}
inline std::uint16_t bf16_bits(double x) {
  const auto f = static_cast<float>(x);
  std::uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>(u >> 16);  // exact for these values: no rounding needed
}
inline double bf16_value(std::uint16_t b) {
  const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}

// Any float16 (normal or subnormal) as a double.
inline double half_any(std::uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  const double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

}  // namespace dtrain::probe
