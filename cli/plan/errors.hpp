// Errors of the planning layer. A spec is checked completely before anything is reported, so a
// SpecError carries every problem of a file at once, each naming the file, line and field.
#pragma once

#include <string>
#include <vector>

#include "common/errors.hpp"

namespace dtrain::plan {

struct SpecIssue {
  std::string source;   // file name as the user gave it
  int line = 0;         // 1-based; 0 when the problem has no position (a missing field)
  std::string field;    // path such as "env.NCCL_DEBUG" or "command[2]"
  std::string message;  // "expected ..., got ..."
};

std::string format_issue(const SpecIssue& issue);

class SpecError : public InputError {
 public:
  explicit SpecError(std::vector<SpecIssue> issues);
  const std::vector<SpecIssue>& issues() const { return issues_; }

 private:
  std::vector<SpecIssue> issues_;
};

}  // namespace dtrain::plan
