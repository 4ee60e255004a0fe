#include "common/on_off.hpp"

#include <gtest/gtest.h>

namespace dtrain {
namespace {

TEST(Switch, AcceptsTheOnWords) {
  for (const char* word : {"1", "yes", "y", "true", "on"}) EXPECT_EQ(parse_switch(word), true);
}

TEST(Switch, AcceptsTheOffWords) {
  for (const char* word : {"0", "no", "n", "false", "off"}) EXPECT_EQ(parse_switch(word), false);
}

TEST(Switch, RefusesAnythingElseIncludingOtherCases) {
  for (const char* word : {"", "2", "On", "YES", "True", " 1", "enable", "closest"}) {
    EXPECT_EQ(parse_switch(word), std::nullopt) << '"' << word << '"';
  }
}

}  // namespace
}  // namespace dtrain
