// Ranks as a reader scans them: "rank 2" or "ranks 0-1,3", so that the 1,023 ranks that reached a
// collective, or printed the same warning, are a few words, not a line of 5 KB. The one place the
// reports word a set of ranks (the ranges themselves are affinity::format_ranges'). Pure.
#pragma once

#include <string>
#include <vector>

namespace dtrain::report {

// "rank 2", "ranks 0-1,3" (ascending, duplicates once); "ranks " for none.
std::string ranks_text(std::vector<int> ranks);

}  // namespace dtrain::report
