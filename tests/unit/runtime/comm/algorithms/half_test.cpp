// float16/bfloat16 conversions used by the host reductions: every 16-bit pattern survives a round
// trip through float, and rounding from float is to nearest even.
#include "comm/algorithms/half.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using dtrain::runtime::bfloat16_to_float;
using dtrain::runtime::float_to_bfloat16;
using dtrain::runtime::float_to_half;
using dtrain::runtime::half_to_float;

bool is_nan_half(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

TEST(Half, EveryPatternRoundTripsThroughFloat) {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if (is_nan_half(bits)) continue;
    ASSERT_EQ(float_to_half(half_to_float(bits)), bits) << std::hex << h;
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(half_to_float(0x0001), 5.9604645e-08f);  // smallest subnormal
  EXPECT_EQ(float_to_half(2048.0f), 0x6800);
  EXPECT_EQ(float_to_half(2049.0f), 0x6800);   // tie: to even (2048)
  EXPECT_EQ(float_to_half(2051.0f), 0x6802);   // tie: to even (2052)
  EXPECT_EQ(float_to_half(70000.0f), 0x7c00);  // overflow: infinity
  EXPECT_TRUE(is_nan_half(float_to_half(half_to_float(0x7e00))));
}

TEST(BFloat16, EveryPatternRoundTripsThroughFloat) {
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    if ((bits & 0x7f80u) == 0x7f80u && (bits & 0x7fu) != 0) continue;  // nan
    ASSERT_EQ(float_to_bfloat16(bfloat16_to_float(bits)), bits) << std::hex << b;
  }
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(256.0f)), 256.0f);
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(257.0f)), 256.0f);  // tie: to even
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(259.0f)), 260.0f);  // tie: to even
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(-3.0f)), -3.0f);
}

}  // namespace
