// The one number parser of the DTRAIN_* and launcher variables: plain decimal text only.
#include "common/number_text.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace dtrain {
namespace {

constexpr long long kMax = std::numeric_limits<long long>::max();

TEST(WholeNumber, TakesDecimalDigitsWithinTheRange) {
  EXPECT_EQ(parse_whole_number("0", 0, 10), 0);
  EXPECT_EQ(parse_whole_number("007", 0, 10), 7);
  EXPECT_EQ(parse_whole_number("9223372036854775807", 0, kMax), kMax);
  EXPECT_EQ(parse_whole_number("10", 0, 10), 10);
  EXPECT_EQ(parse_whole_number("11", 0, 10), std::nullopt);
  EXPECT_EQ(parse_whole_number("3", 4, 10), std::nullopt);
}

// strtol took all of these: leading white space, a sign, hexadecimal (with base 0).
TEST(WholeNumber, RefusesSpacesSignsHexadecimalAndOverflow) {
  for (const char* bad : {"", " 0", "\t5", "5 ", "0\n", "+1", "-0", "-1", "0x10", "1e3", "1.0",
                          "1,000", "١", "9223372036854775808", "99999999999999999999999"}) {
    EXPECT_EQ(parse_whole_number(bad, 0, kMax), std::nullopt) << '"' << bad << '"';
  }
}

TEST(DecimalNumber, TakesFractionsAndExponents) {
  EXPECT_EQ(parse_decimal_number("30", 0, 1e7), 30.0);
  EXPECT_EQ(parse_decimal_number("0.5", 0, 1e7), 0.5);
  EXPECT_EQ(parse_decimal_number("5.", 0, 1e7), 5.0);
  EXPECT_EQ(parse_decimal_number(".25", 0, 1e7), 0.25);
  EXPECT_EQ(parse_decimal_number("1e7", 0, 1e7), 1e7);
  EXPECT_EQ(parse_decimal_number("2.5E-3", 0, 1e7), 0.0025);
  EXPECT_EQ(parse_decimal_number("1e+2", 0, 1e7), 100.0);
  EXPECT_EQ(parse_decimal_number("1e8", 0, 1e7), std::nullopt);
  EXPECT_EQ(parse_decimal_number("0.0009", 0.001, 1e7), std::nullopt);
}

// strtod took all of these: white space, signs, hexadecimal floats, inf and nan.
TEST(DecimalNumber, RefusesSpacesSignsHexadecimalInfinityAndNan) {
  for (const char* bad :
       {"",         ".",   " 5",  "\t5", "5 ",  "+5", "-5",    "0x10", "0x1p3", "inf",
        "infinity", "nan", "NAN", "1e",  "1e+", "e5", "1.2.3", "5s",   "1e999", "1_000"}) {
    EXPECT_EQ(parse_decimal_number(bad, 0, 1e308), std::nullopt) << '"' << bad << '"';
  }
}

}  // namespace
}  // namespace dtrain
