#include "plan/errors.hpp"

namespace dtrain::plan {
namespace {

// The length of the UTF-8 sequence that starts at text[pos], or 0 when none does.
std::size_t utf8_length_at(std::string_view text, std::size_t pos) {
  auto byte = [&](std::size_t i) -> unsigned char {
    return pos + i < text.size() ? static_cast<unsigned char>(text[pos + i]) : 0;
  };
  const unsigned char b = byte(0);
  if (b < 0x80) return 1;
  // The second byte's range rules out overlong forms (E0, F0), surrogates (ED) and code points
  // past U+10FFFF (F4); later bytes are plain continuation bytes.
  unsigned char low = 0x80;
  unsigned char high = 0xbf;
  std::size_t length = 0;
  if (b >= 0xc2 && b <= 0xdf) {
    length = 2;
  } else if (b >= 0xe0 && b <= 0xef) {
    length = 3;
    if (b == 0xe0) low = 0xa0;
    if (b == 0xed) high = 0x9f;
  } else if (b >= 0xf0 && b <= 0xf4) {
    length = 4;
    if (b == 0xf0) low = 0x90;
    if (b == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (byte(1) < low || byte(1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  }
  return length;
}

std::string join_issues(const std::vector<SpecIssue>& issues) {
  std::string out;
  for (const auto& issue : issues) {
    if (!out.empty()) out += '\n';
    out += format_issue(issue);
  }
  return out;
}

}  // namespace

std::string escape_for_message(std::string_view text, std::string_view also) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto b = static_cast<unsigned char>(c);
    const std::size_t length = utf8_length_at(text, i);
    if (length > 1) {
      out.append(text.substr(i, length));
      i += length;
      continue;
    }
    if (length == 0 || b < 0x20 || b == 0x7f || also.find(c) != std::string_view::npos) {
      const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[(b >> 4) & 0xf];
      out += hex[b & 0xf];
    } else {
      out += c;
    }
    ++i;
  }
  return out;
}

std::size_t invalid_utf8_at(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_length_at(text, i);
    if (length == 0) return i;
    i += length;
  }
  return std::string_view::npos;
}

std::string format_issue(const SpecIssue& issue) {
  // The source may be a --set argument, which holds the user's bytes as typed.
  std::string out = escape_for_message(issue.source);
  if (issue.line > 0) {
    out += ':';
    out += std::to_string(issue.line);
  }
  out += ": ";
  if (!issue.field.empty()) {
    out += escape_for_message(issue.field);
    out += ": ";
  }
  out += issue.message;
  return out;
}

SpecError::SpecError(std::vector<SpecIssue> issues)
    : InputError(join_issues(issues)), issues_(std::move(issues)) {}

}  // namespace dtrain::plan
