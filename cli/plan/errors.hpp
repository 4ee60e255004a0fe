// Errors of the planning layer. A spec is checked completely before anything is reported, so a
// SpecError carries every problem of a file at once, each naming the file, line and field.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/errors.hpp"

namespace dtrain::plan {

struct SpecIssue {
  std::string source;   // file name as the user gave it
  int line = 0;         // 1-based; 0 when the problem has no position (a missing field)
  std::string field;    // path such as "env.NCCL_DEBUG" or "command[2]"
  std::string message;  // "expected ..., got ..."
};

// "file:line: field: message". The source (a path, a --set argument) and the field path hold the
// user's bytes as written, so control characters in them (a NUL, a newline) and bytes that are not
// UTF-8 are shown escaped: a NUL would otherwise end the message that what() returns.
std::string format_issue(const SpecIssue& issue);

// `text` with bytes below 0x20, DEL, bytes that are not UTF-8 and those in `also` written as
// \xNN, for showing user input in messages.
std::string escape_for_message(std::string_view text, std::string_view also = "");

// The offset of the first byte of `text` that does not begin a well-formed UTF-8 sequence
// (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF), or npos when it is all
// UTF-8.
std::size_t invalid_utf8_at(std::string_view text);

class SpecError : public InputError {
 public:
  explicit SpecError(std::vector<SpecIssue> issues);
  const std::vector<SpecIssue>& issues() const { return issues_; }

 private:
  std::vector<SpecIssue> issues_;
};

}  // namespace dtrain::plan
