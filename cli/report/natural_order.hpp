// Host names in the order people read them: "node2" before "node10", "x3000c0s7b0n0" before
// "x3000c0s13b0n0" (each run of digits compared as a number), so that a per-node table of a
// 560-node job reads in order instead of node1, node10, node100, node101, ... Pure.
#pragma once

#include <string_view>

namespace dtrain::report {

// A strict weak order: digit runs by value (leading zeros ignored), other characters by byte;
// names equal by that ("node01", "node1") are ordered by their bytes, so no two names tie.
bool natural_less(std::string_view a, std::string_view b);

// For std::map / std::sort: std::map<std::string, T, NaturalLess>.
struct NaturalLess {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return natural_less(a, b); }
};

}  // namespace dtrain::report
