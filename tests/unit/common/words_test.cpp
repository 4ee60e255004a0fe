#include "common/words.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace dtrain {
namespace {

TEST(JoinAlternatives, ListsWordsWithOrBeforeTheLast) {
  EXPECT_EQ(join_alternatives(std::vector<std::string>{}), "");
  EXPECT_EQ(join_alternatives(std::vector<std::string>{"numa"}), "numa");
  EXPECT_EQ(join_alternatives(std::vector<std::string_view>{"numa", "none"}), "numa or none");
  EXPECT_EQ(join_alternatives(std::vector<std::string_view>{"closest", "identity", "none"}),
            "closest, identity or none");
}

// The spec readers' "one of: a, b, c" is the same joiner with a comma before the last word.
TEST(JoinAlternatives, TheLastSeparatorIsTheCallers) {
  EXPECT_EQ(join_alternatives(std::vector<std::string>{"own", "own-first"}, ", "),
            "own, own-first");
  EXPECT_EQ(join_alternatives(std::vector<std::string>{"a", "b", "c"}, " and "), "a, b and c");
}

// libdtrain's messages name each missing rank: "missing ranks: 0, 2" (docs/errors.md).
TEST(JoinRanks, NamesEachRankInTheGivenOrder) {
  EXPECT_EQ(join_ranks({}), "");
  EXPECT_EQ(join_ranks({3}), "3");
  EXPECT_EQ(join_ranks({0, 2, 5, 6, 7}), "0, 2, 5, 6, 7");
}

}  // namespace
}  // namespace dtrain
