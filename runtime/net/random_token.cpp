#include "net/random_token.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>

namespace dtrain::runtime::net {
namespace {

constexpr std::size_t kTokenDigits = 16;

}  // namespace

std::uint64_t draw_token() {
  std::uint64_t token = 0;
  if (getrandom(&token, sizeof token, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof token)) {
    return token;
  }
  const auto now = std::chrono::system_clock::now().time_since_epoch().count();
  return (static_cast<std::uint64_t>(now) * 0x9e3779b97f4a7c15ULL) ^
         static_cast<std::uint64_t>(getpid());
}

std::string token_text(std::uint64_t token) {
  char text[kTokenDigits + 1];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(token));
  return text;
}

std::optional<std::uint64_t> parse_token_text(std::string_view text) {
  if (text.size() != kTokenDigits) return std::nullopt;
  for (const char c : text) {
    // from_chars alone would take upper-case digits too; the text is only ever token_text's.
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  }
  std::uint64_t token = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), token, 16);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return token;
}

}  // namespace dtrain::runtime::net
