// The one formatter of the numbers `dtrain stats` shows (tables and plots): plain decimals only.
#include "report/plain_number.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace dtrain::report {
namespace {

TEST(PlainNumber, NeverAnExponent) {
  // The rates that `stats` printed as 8300, 1.009e+04 and 5.62e+04 in one table.
  EXPECT_EQ(plain_number(8300), "8300");
  EXPECT_EQ(plain_number(10093.4), "10093");
  EXPECT_EQ(plain_number(56200), "56200");
  EXPECT_EQ(plain_number(1e4), "10000");  // the plot axis read 1e+04
  EXPECT_EQ(plain_number(1.5e12), "1500000000000");
  EXPECT_EQ(plain_number(1e-7), "0.0000001");
  EXPECT_EQ(plain_number(1e-12), "0");
}

TEST(PlainNumber, DigitsFollowTheMagnitude) {
  EXPECT_EQ(plain_number(0), "0");
  EXPECT_EQ(plain_number(123.456), "123");
  EXPECT_EQ(plain_number(99.96), "100");
  EXPECT_EQ(plain_number(12.34), "12.3");
  EXPECT_EQ(plain_number(1.234), "1.23");
  EXPECT_EQ(plain_number(0.5), "0.5");
  EXPECT_EQ(plain_number(90), "90");
  EXPECT_EQ(plain_number(0.012345), "0.0123");
  EXPECT_EQ(plain_number(-2.5), "-2.5");
  EXPECT_EQ(plain_number(-1e-12), "0");
}

TEST(PlainNumber, NotANumberIsADash) {
  EXPECT_EQ(plain_number(std::numeric_limits<double>::quiet_NaN()), "-");
  EXPECT_EQ(plain_number(std::numeric_limits<double>::infinity()), "-");
}

TEST(DurationText, PicksTheUnitAPersonReads) {
  EXPECT_EQ(duration_text(0), "0 s");
  EXPECT_EQ(duration_text(0.00045), "450 us");
  EXPECT_EQ(duration_text(0.0009999999), "1 ms");  // not "1000 us"
  EXPECT_EQ(duration_text(0.9999999), "1 s");
  EXPECT_EQ(duration_text(0.0123), "12.3 ms");
  EXPECT_EQ(duration_text(7.2), "7.2 s");
  EXPECT_EQ(duration_text(125.5), "2 min 5 s");
  EXPECT_EQ(duration_text(3900), "1 h 5 min");
}

}  // namespace
}  // namespace dtrain::report
