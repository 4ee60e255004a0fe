#include "common/number_text.hpp"

#include <charconv>
#include <cmath>

namespace dtrain {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Moves past the digits at `pos`; how many there were.
std::size_t skip_digits(std::string_view text, std::size_t& pos) {
  const std::size_t start = pos;
  while (pos < text.size() && is_digit(text[pos])) ++pos;
  return pos - start;
}

}  // namespace

std::optional<long long> parse_whole_number(std::string_view text, long long min, long long max) {
  std::size_t pos = 0;
  if (skip_digits(text, pos) == 0 || pos != text.size()) return std::nullopt;
  // Digits only, so from_chars fails only by overflow: past any max.
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (value < min || value > max) return std::nullopt;
  return value;
}

std::optional<double> parse_decimal_number(std::string_view text, double min, double max) {
  // The grammar is checked here; from_chars (which alone would take a '-', "inf" and "nan")
  // only converts what passed.
  std::size_t pos = 0;
  std::size_t digits = skip_digits(text, pos);
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    digits += skip_digits(text, pos);
  }
  if (digits == 0) return std::nullopt;
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    ++pos;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) ++pos;
    if (skip_digits(text, pos) == 0) return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // ERANGE: an exponent past what a double holds (1e999), or one so small it is 0.
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  if (!(value >= min && value <= max)) return std::nullopt;
  return value;
}

}  // namespace dtrain
