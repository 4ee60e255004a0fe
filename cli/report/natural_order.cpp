#include "report/natural_order.hpp"

#include <cstddef>

namespace dtrain::report {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The digit run of s starting at i, without its leading zeros; i moves past the run.
std::string_view digit_run(std::string_view s, std::size_t& i) {
  while (i < s.size() && s[i] == '0' && i + 1 < s.size() && is_digit(s[i + 1])) ++i;
  const std::size_t start = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  return s.substr(start, i - start);
}

}  // namespace

bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      const std::string_view x = digit_run(a, i);
      const std::string_view y = digit_run(b, j);
      // Without leading zeros, the longer run is the larger number; equal lengths compare by digit.
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  if ((i < a.size()) != (j < b.size())) return j < b.size();  // a prefix of the other goes first
  return a < b;                                               // "node01" and "node1": by bytes
}

}  // namespace dtrain::report
