#include "plan/errors.hpp"

namespace dtrain::plan {
namespace {

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
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f || also.find(c) != std::string_view::npos) {
      const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[(b >> 4) & 0xf];
      out += hex[b & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_issue(const SpecIssue& issue) {
  std::string out = issue.source;
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
