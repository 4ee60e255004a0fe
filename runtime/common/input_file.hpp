// Files dtrain reads as input: those a user names (a job spec, a site profile, a topology XML)
// and those of a run directory (the rank logs and metric records, attempts.jsonl,
// checkpoints.jsonl, job-end.jsonl, plan.json). A name may lead to anything: a symlink to
// /dev/zero would be read forever and a FIFO would block the reader forever, so only a regular
// file (after following symlinks) is read, opened without waiting, and a whole-file read stops
// at a cap. Every such open goes through open_input() below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common/errors.hpp"

namespace dtrain {

// A named input that is missing, unreadable, not a regular file or too large.
class InputFileError : public InputError {
 public:
  using InputError::InputError;
};

// What open_input() found.
struct OpenedInput {
  int fd = -1;             // open for reading, owned by the caller; -1 when not a regular file
  int error = 0;           // the errno of a failed open or fstat (fd is -1)
  std::string kind;        // when it opened but is not a regular file: "a FIFO (named pipe)"
  std::uint64_t size = 0;  // of the regular file, when it opened
};

// Opens `path` for reading when it is a regular file after following symlinks. Never blocks (a
// FIFO is refused without waiting for a writer) and never throws: the caller decides what a
// missing or special file means (an error, or a file left out) and names it in its own terms.
OpenedInput open_input(const std::string& path);

// Throws InputFileError unless `path` is a readable regular file; `what` says what was expected
// ("a job spec (YAML)") and `component`, when given, follows "dtrain: " ("topology").
void check_input_file(const std::string& path, const std::string& what,
                      const std::string& component = "");

// The whole file, after check_input_file's checks; more than `max_bytes` is an InputFileError.
std::string read_input_file(const std::string& path, const std::string& what,
                            std::size_t max_bytes);

// The same, but nothing when `path` names nothing (no such file, or a dangling symlink): for the
// files a run directory has only sometimes.
std::optional<std::string> read_input_file_if_present(const std::string& path,
                                                      const std::string& what,
                                                      std::size_t max_bytes);

}  // namespace dtrain
