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

std::string format_issue(const SpecIssue& issue) {
  std::string out = issue.source;
  if (issue.line > 0) {
    out += ':';
    out += std::to_string(issue.line);
  }
  out += ": ";
  if (!issue.field.empty()) {
    out += issue.field;
    out += ": ";
  }
  out += issue.message;
  return out;
}

SpecError::SpecError(std::vector<SpecIssue> issues)
    : InputError(join_issues(issues)), issues_(std::move(issues)) {}

}  // namespace dtrain::plan
