// How messages and --help list accepted words: "closest, identity or none". One joiner, so that
// every parser of every library (the affinity policies, the frameworks, the plugin's step
// policies, the spec's "one of: ..." lists) spells its alternatives the same way.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dtrain {

// "a", "a or b", "a, b or c"; `last` separates the last two words (", " gives "a, b, c"),
// `between` the others ("|" and "|" give a usage's "a|b|c").
template <typename Word>
std::string join_alternatives(const std::vector<Word>& words, std::string_view last = " or ",
                              std::string_view between = ", ") {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? last : between;
    out += std::string_view(words[i]);
  }
  return out;
}

// "0, 2": rank numbers as libdtrain's messages list them (the missing ranks of a failed collective,
// the ranks not yet in a call). One joiner for the TCP backend, the hierarchy and the shared-memory
// allreduce. The reports compact long lists into ranges instead ("0-3,5": cli/report/
// rank_ranges.hpp, for the thousands of ranks a job's logs may name); a rank's message names the
// few it waits for, each by its number, and docs/errors.md and the tests pin that form.
inline std::string join_ranks(const std::vector<int>& ranks) {
  std::string text;
  for (int r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text;
}

}  // namespace dtrain
