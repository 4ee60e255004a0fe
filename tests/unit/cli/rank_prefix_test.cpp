#include "rank_prefix.hpp"

#include <gtest/gtest.h>

namespace dtrain::cli {
namespace {

TEST(RankPrefix, EachWholeLineGetsThePrefixAndAnUnfinishedOneWaits) {
  std::string pending;
  EXPECT_EQ(prefixed_lines("[3] ", "a\nb\npart", pending), "[3] a\n[3] b\n");
  EXPECT_EQ(pending, "part");
  EXPECT_EQ(prefixed_lines("[3] ", "ial", pending), "");
  EXPECT_EQ(prefixed_lines("[3] ", " line\n\n", pending), "[3] partial line\n[3] \n");
  EXPECT_EQ(pending, "");
  EXPECT_EQ(prefixed_lines("[3] ", "", pending), "");
}

}  // namespace
}  // namespace dtrain::cli
