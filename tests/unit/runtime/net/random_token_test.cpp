// The tokens that tell a job's (or a listener's) connections and datagrams from strangers': drawn
// at random, and their text read back only when it is one.
#include "net/random_token.hpp"

#include <gtest/gtest.h>

#include <set>

namespace {

namespace net = dtrain::runtime::net;

TEST(RandomToken, TokensDifferFromDrawToDraw) {
  std::set<std::uint64_t> drawn;
  for (int i = 0; i < 64; ++i) drawn.insert(net::draw_token());
  EXPECT_EQ(drawn.size(), 64u);
}

TEST(RandomToken, ItsTextIsSixteenHexDigitsAndReadsBack) {
  EXPECT_EQ(net::token_text(0), "0000000000000000");
  EXPECT_EQ(net::token_text(0xfedcba9876543210ULL), "fedcba9876543210");
  for (const std::uint64_t t :
       {std::uint64_t{0}, std::uint64_t{1}, ~std::uint64_t{0}, net::draw_token()}) {
    EXPECT_EQ(net::parse_token_text(net::token_text(t)), t);
  }
}

TEST(RandomToken, AnyOtherTextIsNoToken) {
  for (const char* text :
       {"", "123", "fedcba987654321", "fedcba98765432100", "FEDCBA9876543210", "0x00000000000000",
        "+000000000000000", " 000000000000000", "000000000000000g"}) {
    EXPECT_EQ(net::parse_token_text(text), std::nullopt) << '"' << text << '"';
  }
}

}  // namespace
