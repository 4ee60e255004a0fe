#include "affinity/cpuset.hpp"

#include <gtest/gtest.h>

#include "affinity/errors.hpp"

namespace dtrain::affinity {
namespace {

TEST(CpuSet, ListFormRoundTrips) {
  for (const char* text : {"", "0", "0-15,64-79", "1,3,5", "8-87", "0-1,130-200,1000"}) {
    EXPECT_EQ(CpuSet::parse(text).to_list(), text);
  }
  // Out-of-order and overlapping input is normalised.
  EXPECT_EQ(CpuSet::parse("5,0-3,2-4").to_list(), "0-5");
  EXPECT_EQ(CpuSet::parse("64-79,0-15").count(), 32);
}

TEST(CpuSet, RangesOfAnyNumbers) {
  EXPECT_EQ(format_ranges({3, 0, 1, 8, 1}), "0-1,3,8");
  EXPECT_EQ(format_ranges({2, 3, 4, 5}), "2-5");
  EXPECT_EQ(format_ranges({}), "");
}

TEST(CpuSet, SetOperations) {
  const CpuSet a = CpuSet::parse("0-7");
  const CpuSet b = CpuSet::parse("4-11,100");
  EXPECT_EQ((a & b).to_list(), "4-7");
  EXPECT_EQ((a | b).to_list(), "0-11,100");
  EXPECT_EQ((b - a).to_list(), "8-11,100");
  EXPECT_TRUE(a.intersects(b));
  EXPECT_FALSE(a.intersects(CpuSet{100}));
  EXPECT_TRUE(CpuSet::parse("2-3").is_subset_of(a));
  EXPECT_FALSE(b.is_subset_of(a));
  EXPECT_EQ(b.first(), 4);
  EXPECT_EQ(b.last(), 100);
  EXPECT_EQ(CpuSet().first(), -1);
  EXPECT_TRUE((a - a).empty());
  EXPECT_EQ(a - a, CpuSet());  // no trailing zero words: equality is by content
  CpuSet c = b;
  c.remove(100);
  EXPECT_EQ(c, CpuSet::parse("4-11"));
  EXPECT_EQ(CpuSet::range(3, 2), CpuSet());
}

TEST(CpuSet, MalformedListsNameTheInput) {
  for (const char* bad : {"0-", "-3", "a", "1,,2", "3-1", "1,", "0x3", "99999999"}) {
    try {
      CpuSet::parse(bad, "--cpus-allowed");
      FAIL() << bad;
    } catch (const PolicyError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("dtrain: cpuset: --cpus-allowed: expected a list such as 0-3,8 "
                            "(indices below 1048576), got \"") +
                    bad + "\"");
    }
  }
}

}  // namespace
}  // namespace dtrain::affinity
