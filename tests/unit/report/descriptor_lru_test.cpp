// Which merge inputs hold a descriptor under a budget: least recently used gives it up, a failed
// open (EMFILE) shrinks the budget to what could be held.
#include "report/descriptor_lru.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace dtrain::report {
namespace {

TEST(DescriptorLru, OpensEachInputOnceWhileAllFit) {
  DescriptorLru lru(3);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto use = lru.use(i);
    EXPECT_TRUE(use.open);
    EXPECT_FALSE(use.release);
  }
  for (int round = 0; round < 4; ++round) {
    for (std::size_t i = 0; i < 3; ++i) {
      const auto use = lru.use(i);
      EXPECT_FALSE(use.open) << i;
      EXPECT_FALSE(use.release) << i;
    }
  }
  EXPECT_EQ(3u, lru.held());
}

TEST(DescriptorLru, TheLeastRecentlyUsedGivesItsDescriptorUp) {
  DescriptorLru lru(2);
  lru.use(0);
  lru.use(1);
  lru.use(0);  // 1 is now the oldest
  auto use = lru.use(2);
  EXPECT_TRUE(use.open);
  ASSERT_TRUE(use.release);
  EXPECT_EQ(1u, *use.release);
  EXPECT_TRUE(lru.holds(0));
  EXPECT_FALSE(lru.holds(1));
  EXPECT_TRUE(lru.holds(2));
  use = lru.use(1);  // re-opened: 0 is the oldest now
  EXPECT_TRUE(use.open);
  ASSERT_TRUE(use.release);
  EXPECT_EQ(0u, *use.release);
  EXPECT_EQ(2u, lru.held());
}

TEST(DescriptorLru, NeverHoldsMoreThanItsCapacityOverManyInputs) {
  DescriptorLru lru(5);
  std::size_t opens = 0;
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < 100; ++i) {
      const auto use = lru.use((i * 37) % 100);
      opens += use.open;
      ASSERT_LE(lru.held(), 5u);
    }
  }
  EXPECT_EQ(300u, opens);  // round robin over more inputs than fit: every use re-opens
}

TEST(DescriptorLru, ShrinkFreesTheOldestAndKeepsWhatCouldBeHeld) {
  DescriptorLru lru(10);
  lru.use(0);
  lru.use(1);
  lru.use(2);
  lru.use(3);  // the process ran out here
  lru.forget(3);
  const auto victim = lru.shrink();
  ASSERT_TRUE(victim);
  EXPECT_EQ(0u, *victim);
  EXPECT_EQ(3u, lru.capacity());  // the three that were open, one of them freed for the retry
  auto use = lru.use(3);
  EXPECT_TRUE(use.open);
  EXPECT_FALSE(use.release);
  use = lru.use(0);
  EXPECT_TRUE(use.open);
  ASSERT_TRUE(use.release);
  EXPECT_EQ(1u, *use.release);
}

TEST(DescriptorLru, ShrinkWithNothingHeldSaysSo) {
  DescriptorLru lru(4);
  lru.use(7);
  lru.forget(7);
  EXPECT_FALSE(lru.shrink());
  EXPECT_EQ(0u, lru.held());
}

TEST(DescriptorLru, ForgetOfAnInputNotHeldIsHarmless) {
  DescriptorLru lru(1);
  lru.forget(42);
  lru.use(1);
  lru.forget(1);
  lru.forget(1);
  EXPECT_EQ(0u, lru.held());
  EXPECT_TRUE(lru.use(1).open);
}

TEST(DescriptorLru, RefusesAZeroCapacity) { EXPECT_THROW(DescriptorLru(0), std::invalid_argument); }

}  // namespace
}  // namespace dtrain::report
