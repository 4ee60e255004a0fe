#include "launch/rank_place.hpp"

#include <gtest/gtest.h>

namespace dtrain::launch {
namespace {

TEST(RankPlace, RankPlaceNamesTheGlobalAndLocalPlace) {
  const Environment env = rank_place_environment({5, 8, 1, 4});
  EXPECT_EQ(env, (Environment{{"DTRAIN_RANK", "5"},
                              {"DTRAIN_WORLD_SIZE", "8"},
                              {"DTRAIN_LOCAL_RANK", "1"},
                              {"DTRAIN_LOCAL_SIZE", "4"}}));
}

}  // namespace
}  // namespace dtrain::launch
