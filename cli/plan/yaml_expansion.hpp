// What a YAML text becomes once its aliases are expanded, measured from the parser's events before
// any tree is built: a 600-byte spec of nested anchors and aliases ("billion laughs") names 10^9
// nodes, which every walk of the tree yaml-cpp builds would visit (`dtrain plan` ran for minutes
// to forever). Counted per anchor, so the count itself costs one pass over the text. Also the
// documents: a spec is one, and a second one was silently ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dtrain::plan {

// More nodes than any job spec or site profile has, by three orders of magnitude.
inline constexpr std::uint64_t kMaxExpandedNodes = 100'000;

struct YamlShapeProblem {
  int line = 0;  // 1-based; 0 when the parser gives none
  std::string what;
};

// Nothing when `text` is one YAML document of at most kMaxExpandedNodes nodes counted with its
// aliases expanded; else where and what. YAML errors themselves are left to the loader (the
// count stops at the first).
std::optional<YamlShapeProblem> check_yaml_shape(std::string_view text);

}  // namespace dtrain::plan
