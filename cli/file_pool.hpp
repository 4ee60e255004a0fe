// The rank logs `dtrain logs` merges, read through at most `max_open` descriptors at once, so a
// run of 4,096 ranks merges under `ulimit -n 256` with the bytes it gives without a limit.
//
// Why re-open rather than merge in batches through temporary runs (`sort --batch-size`): the
// merge stays the one k-way merge of report::LogMerger, so ties, lines without a timestamp and
// --grep/--since/--until/--tail behave exactly as with every log open (the output is the same by
// construction, not by a second ordering rule for runs); --follow keeps working, which temporary
// runs of live files could not; nothing is written to disk (a batched merge writes every byte
// twice); and memory stays what it is with every file open: each rank's read buffer (16 KiB to
// 1 MiB, report/log_merge) and no more. The cost is an open and a close per buffer refill of a
// log whose descriptor was given up: one per 16 KiB or more of log, nothing when all fit.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "report/descriptor_lru.hpp"
#include "report/log_merge.hpp"

namespace dtrain::cli {

class FilePool {
 public:
  explicit FilePool(std::size_t max_open);
  ~FilePool();
  FilePool(const FilePool&) = delete;
  FilePool& operator=(const FilePool&) = delete;

  // A source reading `path` from its start, through this pool (which must outlive it). Opens the
  // file now, so an unreadable log is refused before anything is printed (throws naming it).
  std::unique_ptr<report::ByteSource> source(const std::string& path);

  std::size_t open_now() const { return lru_.held(); }
  std::size_t max_open() const { return lru_.capacity(); }

 private:
  class Source;
  struct File {
    std::string path;
    off_t offset = 0;  // where the next read starts: a re-opened file goes on from there
    dev_t dev = 0;     // the file first opened: a re-open must find the same one
    ino_t ino = 0;
    int fd = -1;
  };
  std::size_t read(std::size_t file, char* buffer, std::size_t capacity);
  void ensure_open(std::size_t file);
  void close_file(std::size_t file);

  std::vector<File> files_;
  report::DescriptorLru lru_;
};

// How many rank logs `dtrain logs` may keep open besides what the process needs otherwise: the
// soft limit on open files is raised toward `wanted` plus a reserve (up to the hard limit), and
// what it then allows beyond the descriptors open now and the reserve is the answer (at least 1).
std::size_t open_files_budget(std::size_t wanted);

}  // namespace dtrain::cli
