// A number field of a line dtrain wrote itself (the waits and arrivals the ranks' loggers publish
// for the live watches): the whole text in std::from_chars' form, nothing before or after it.
// One definition for the hang watch and the arrival skew, which read such lines. Pure.
#pragma once

#include <charconv>
#include <string_view>
#include <system_error>

namespace dtrain::report {

// Whether `text` is exactly one number of T's type; `out` holds it when so.
template <typename T>
bool parse_number(std::string_view text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace dtrain::report
