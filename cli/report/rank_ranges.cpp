#include "report/rank_ranges.hpp"

#include <algorithm>

#include "affinity/cpuset.hpp"

namespace dtrain::report {

std::string ranks_text(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  const char* word = ranks.size() == 1 ? "rank " : "ranks ";
  return word + affinity::format_ranges(std::move(ranks));
}

}  // namespace dtrain::report
