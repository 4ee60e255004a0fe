#include "plan/yaml_fields.hpp"

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
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    // yaml-cpp guards its recursion depth (DeepRecursion), so deeply nested input lands here too.
    errors.add_at(e.mark.is_null() ? 0 : e.mark.line + 1, "", "invalid YAML: " + e.msg);
    errors.raise();
  }
}

}  // namespace detail
}  // namespace dtrain::plan
