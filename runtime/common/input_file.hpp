// Files a user names as inputs (a job spec, a site profile, a topology XML). A name may lead to
// anything: a symlink to /dev/zero would be read forever and a FIFO would block the reader
// forever, so only a regular file (after following symlinks) is read, and at most a cap of it.
#pragma once

#include <cstddef>
#include <string>

#include "common/errors.hpp"

namespace dtrain {

// A named input that is missing, unreadable, not a regular file or too large.
class InputFileError : public InputError {
 public:
  using InputError::InputError;
};

// Throws InputFileError unless `path` is a readable regular file; `what` says what was expected
// ("a job spec (YAML)") and `component`, when given, follows "dtrain: " ("topology"). Never
// blocks: a FIFO is refused without waiting for a writer.
void check_input_file(const std::string& path, const std::string& what,
                      const std::string& component = "");

// The whole file, after check_input_file's checks; more than `max_bytes` is an InputFileError.
std::string read_input_file(const std::string& path, const std::string& what,
                            std::size_t max_bytes);

}  // namespace dtrain
