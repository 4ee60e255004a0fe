#include "report/natural_order.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace dtrain::report {
namespace {

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end(), NaturalLess{});
  return v;
}

TEST(NaturalOrder, NumbersInNamesSortByValue) {
  EXPECT_EQ(sorted({"node10", "node2", "node1", "node100", "node11"}),
            (std::vector<std::string>{"node1", "node2", "node10", "node11", "node100"}));
  // Polaris' names: several digit runs, each by value.
  EXPECT_EQ(sorted({"x3000c0s13b0n0", "x3000c0s7b1n0", "x3000c0s7b0n0", "x3002c0s1b0n0"}),
            (std::vector<std::string>{"x3000c0s7b0n0", "x3000c0s7b1n0", "x3000c0s13b0n0",
                                      "x3002c0s1b0n0"}));
}

TEST(NaturalOrder, ANameWithoutNumbersPrefixesAndLeadingZeros) {
  EXPECT_EQ(sorted({"node", "b", "a10", "a9", "?", "node0"}),
            (std::vector<std::string>{"?", "a9", "a10", "b", "node", "node0"}));
  // Equal by value, different bytes: both kept, in a fixed order (a strict weak order).
  EXPECT_TRUE(natural_less("node01", "node1"));
  EXPECT_FALSE(natural_less("node1", "node01"));
  EXPECT_FALSE(natural_less("node1", "node1"));
  EXPECT_TRUE(natural_less("node007", "node10"));
  // A run longer than any integer type: compared as digits, not parsed.
  EXPECT_TRUE(natural_less("n99999999999999999999999", "n100000000000000000000000"));
}

TEST(NaturalOrder, AMapOfHostsIteratesNaturally) {
  std::map<std::string, int, NaturalLess> by_host{{"node10", 10}, {"node2", 2}, {"node1", 1}};
  std::vector<int> order;
  for (const auto& [host, n] : by_host) order.push_back(n);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 10}));
}

}  // namespace
}  // namespace dtrain::report
