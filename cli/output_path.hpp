// Which file an output flag (`report -o`, `timeline -o`, `stats --plot`) may write, decided from
// what the path names, without I/O: the adapter (output_file.hpp) looks at the disk and writes.
// A command writes only to a regular file or a new path, never over what it does not own:
//   - a new path (its directory must exist): created;
//   - a regular file: replaced whole (written beside it under a temporary name, then renamed);
//   - a symbolic link to a regular file: followed, and the file it leads to is replaced in its
//     own directory, so the link stays a link (renaming over the link replaced it with a file);
//     a link to nothing or a link loop is refused (writing through a dangling link creates a
//     file wherever it points, unseen);
//   - a directory: the command's default file name in it (DIR/report.html, DIR/trace.json),
//     looked at in turn; a command without a default name refuses it;
//   - a FIFO, a device or a socket: refused (renaming over /dev/null replaced the machine's
//     /dev/null); standard output is `-`, where the command allows it;
//   - a file of a run directory being read (plan.json, a rank log, ...: is_run_record_name), by
//     any name (a symlink, a hard link, `runs/x/../x/plan.json`): refused, the adapter comparing
//     device and inode;
//   - an empty value: refused (leaving the flag out gives the default).
// Every refusal is a UsageError (exit status 2) naming the flag, the value, what was expected
// and what the path is. docs/errors.md ("Where a command writes").
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace dtrain::cli {

// What a path names, as the adapter found it.
struct PathFacts {
  enum class Kind {
    kNew,              // nothing there (a missing directory on the way fails at the write)
    kRegular,          // a regular file, maybe through symbolic links
    kDirectory,        // maybe through symbolic links
    kSpecial,          // a FIFO, a device, a socket: `special` says which
    kDanglingSymlink,  // a symbolic link to nothing: `link_target` is what it says
    kSymlinkLoop,      // `error` says what the system said
    kUnreadable,       // it could not be looked at: `error` says why
  };
  Kind kind = Kind::kNew;
  std::string special;      // "a FIFO (named pipe)", "a character device", ...
  std::string link_target;  // of a dangling link
  std::string error;        // strerror of kSymlinkLoop, kUnreadable
  // Of kRegular: the file a symbolic link leads to (its path, all links resolved), empty when the
  // path is no link.
  std::string resolved;
  // Of kRegular: the path of a run directory's record that is the same file (device and inode),
  // empty when none; `record_of` is that run directory.
  std::string run_record;
  std::string record_of;
};

// What a command asks of its output flag.
struct OutputRequest {
  std::string command;                   // "report": messages begin "dtrain: report: "
  std::string flag;                      // "-o"
  std::optional<std::string> given;      // the flag's value; nothing when it was left out
  std::string default_path;              // written when the flag is left out; "" for none
  std::string default_name;              // the file written in a directory; "" refuses directories
  bool standard_output_allowed = false;  // `-` means standard output
};

// Where to write.
struct OutputTarget {
  bool standard_output = false;
  std::string shown;  // the path as the user gave it (DIR/report.html for a directory): messages
  std::string file;   // the file to create or replace (after a symbolic link); "" for stdout
  // What failures name: "dtrain: report: -o out" (or "dtrain: report: runs/x/report.html"
  // without the flag, or "dtrain: report: -o out: out/report.html" for a directory).
  std::string subject;
  bool replaces_file = false;  // `file` exists and is replaced
};

// Decides where `request` writes, asking `look` what a path names (the adapter's
// look_at_output_path; tests give a table). Throws UsageError for every refusal above.
OutputTarget choose_output(const OutputRequest& request,
                           const std::function<PathFacts(const std::string&)>& look);

// Whether `name` (a file name in a run directory) is one of the run's records, which no output
// flag may replace: job.yaml, launch.sh, mpijob.yaml, plan.json, exit-status, attempts.jsonl,
// checkpoints.jsonl, job-end.jsonl, rank-NNNNN.log, rank-NNNNN.jsonl and the batch job's own
// NAME-ID.out (records/run_dir_layout.hpp). The commands' own outputs (report.html, trace.json)
// are not: writing them again is what the commands do.
bool is_run_record_name(std::string_view name);

}  // namespace dtrain::cli
