#include "common/on_off.hpp"

namespace dtrain {

std::optional<bool> parse_switch(std::string_view text) {
  for (std::string_view yes : {"1", "yes", "y", "true", "on"}) {
    if (text == yes) return true;
  }
  for (std::string_view no : {"0", "no", "n", "false", "off"}) {
    if (text == no) return false;
  }
  return std::nullopt;
}

}  // namespace dtrain
