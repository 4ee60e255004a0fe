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

}  // namespace dtrain
