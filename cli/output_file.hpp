// The one writer of the files the commands make (`report`'s page, `timeline`'s trace, `stats
// --plot`'s SVG): where to write is choose_output's decision (output_path.hpp) on what
// look_at_output_path finds on disk, and the bytes go to a new file beside the target,
// TARGET.partial-PID, renamed over the target when complete. A failure halfway (a bad record, a
// full disk) leaves no half-written file, and a file the output replaces stays as it was until
// the rename. docs/errors.md ("Where a command writes").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "output_path.hpp"

namespace dtrain::cli {

// What `path` names, for choose_output: lstat, then stat through a symbolic link (a link to
// nothing, a loop), the kind of a special file, and of a regular file the file a link leads to and
// whether it is one of the records of `run_dirs` (is_run_record_name, compared by device and
// inode, so that no other name of a record passes).
PathFacts look_at_output_path(const std::string& path, const std::vector<std::string>& run_dirs);

// choose_output, looking at the disk; `run_dirs` are the run directories the command reads.
OutputTarget resolve_output(const OutputRequest& request, const std::vector<std::string>& run_dirs);

// An output being written. Created by the constructor (TARGET.partial-PID, new: a stale one or a
// link in its place is not followed; it takes the permissions of the file it replaces), written
// in 64 KiB pieces, renamed over the target by commit(), and removed by the destructor when not
// committed. Standard output is written directly (nothing to take back on failure).
class OutputFile {
 public:
  // Throws UsageError ("cannot write it") when the temporary file cannot be created: a missing or
  // read-only directory is the user's to fix.
  explicit OutputFile(OutputTarget target);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  const OutputTarget& target() const { return target_; }

  // Throws dtrain::Failure naming the output when the system refuses the bytes (a full disk).
  void write(std::string_view bytes);
  // Writes what is buffered, closes and renames; throws dtrain::Failure as write() does.
  void commit();

 private:
  void flush();

  OutputTarget target_;
  std::string partial_;  // "" for standard output
  int fd_ = -1;
  bool committed_ = false;
  std::string buffer_;
};

// OutputFile for a whole text: written, then renamed.
void write_file_atomically(const OutputTarget& target, std::string_view text);

}  // namespace dtrain::cli
