#include "plan/yaml_fields.hpp"

#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <limits>

namespace dtrain::plan {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closest_match(std::string_view given, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(given, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  const std::size_t allowed = std::max<std::size_t>(2, given.size() / 3);
  return best_distance <= allowed ? best : std::string();
}

namespace detail {

YAML::Node load_yaml(std::string_view text, std::size_t max_bytes, const std::string& what,
                     Collector& errors) {
  if (text.size() > max_bytes) {
    errors.add_at(0, "",
                  "expected " + what + " of at most " + std::to_string(max_bytes) + " bytes, got " +
                      std::to_string(text.size()) + " bytes");
    errors.raise();
  }
  if (auto nul = text.find('\0'); nul != std::string_view::npos) {
    errors.add_at(
        0, "",
        "expected YAML text, got binary data (a NUL byte at offset " + std::to_string(nul) + ")");
    errors.raise();
  }
  // Job specs nest two or three levels; refuse deep flow nesting up front with a plain message
  // (yaml-cpp's own depth guard reports it only as "bad file").
  constexpr int kMaxDepth = 64;
  int depth = 0;
  int line = 1;
  for (char c : text) {
    if (c == '\n') ++line;
    if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) {
        errors.add_at(line, "",
                      "expected at most " + std::to_string(kMaxDepth) +
                          " levels of nested [ ] or { }, got more");
        errors.raise();
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& e) {
    // Deep block nesting (indentation, "- - - -") reaches yaml-cpp's own guard, whose message is
    // only "bad file".
    errors.add_at(
        e.mark.is_null() ? 0 : e.mark.line + 1, "",
        "expected " + what +
            " nested a few levels deep, got nesting deeper than the YAML parser's limit of " +
            std::to_string(e.depth()) + " levels");
    errors.raise();
  } catch (const YAML::Exception& e) {
    errors.add_at(e.mark.is_null() ? 0 : e.mark.line + 1, "", "invalid YAML: " + e.msg);
    errors.raise();
  }
}

}  // namespace detail
}  // namespace dtrain::plan
