#include "file_pool.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "common/input_file.hpp"
#include "common/open_files.hpp"

namespace dtrain::cli {

// Each log's bytes come from the pool, which opens the file again when it gave the descriptor up.
class FilePool::Source : public report::ByteSource {
 public:
  Source(FilePool& pool, std::size_t file) : pool_(pool), file_(file) {}
  std::size_t read(char* buffer, std::size_t capacity) override {
    return pool_.read(file_, buffer, capacity);
  }

 private:
  FilePool& pool_;
  std::size_t file_;
};

FilePool::FilePool(std::size_t max_open) : lru_(max_open) {}

FilePool::~FilePool() {
  for (auto& f : files_) {
    if (f.fd >= 0) ::close(f.fd);
  }
}

std::unique_ptr<report::ByteSource> FilePool::source(const std::string& path) {
  files_.push_back({path});
  const std::size_t file = files_.size() - 1;
  try {
    ensure_open(file);
  } catch (...) {
    files_.pop_back();
    throw;
  }
  return std::make_unique<Source>(*this, file);
}

void FilePool::close_file(std::size_t file) {
  ::close(files_[file].fd);
  files_[file].fd = -1;
}

void FilePool::ensure_open(std::size_t file) {
  for (;;) {
    const auto use = lru_.use(file);
    if (!use.open) return;
    if (use.release) close_file(*use.release);
    File& f = files_[file];
    // The one open of every input (common/input_file.hpp): never blocks, regular files only. A
    // log listed as a regular file may have been replaced by a FIFO since.
    const OpenedInput in = open_input(f.path);
    f.fd = in.fd;
    if (f.fd >= 0) break;
    const int error = in.error;
    lru_.forget(file);
    if (error == 0) {
      throw InputFileError("dtrain: " + f.path + ": expected a regular file, got " + in.kind);
    }
    // Out of descriptors although the budget allowed one more (the process holds more than
    // counted): give the oldest up and go on with fewer.
    if (error == EMFILE || error == ENFILE) {
      if (const auto victim = lru_.shrink()) {
        close_file(*victim);
        continue;
      }
    }
    throw std::runtime_error("dtrain: cannot read " + f.path + ": " + std::strerror(error));
  }
  File& f = files_[file];
  struct stat st {};
  ::fstat(f.fd, &st);
  if (f.dev == 0 && f.ino == 0) {
    f.dev = st.st_dev;
    f.ino = st.st_ino;
  } else if (st.st_dev != f.dev || st.st_ino != f.ino) {
    throw std::runtime_error("dtrain: " + f.path +
                             " was replaced by another file while it was being read; expected "
                             "rank logs that are only appended to");
  }
  ::posix_fadvise(f.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
}

std::size_t FilePool::read(std::size_t file, char* buffer, std::size_t capacity) {
  ensure_open(file);
  File& f = files_[file];
  for (;;) {
    const ssize_t n = ::pread(f.fd, buffer, capacity, f.offset);
    if (n >= 0) {
      f.offset += n;
      return static_cast<std::size_t>(n);
    }
    if (errno != EINTR) {
      throw std::runtime_error("dtrain: cannot read " + f.path + ": " + std::strerror(errno));
    }
  }
}

namespace {

// Descriptors this process holds now; a guess when /proc is not mounted.
std::size_t open_descriptors() {
  std::error_code ec;
  std::size_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++n;
  }
  return ec || n == 0 ? 16 : n;
}

}  // namespace

std::size_t open_files_budget(std::size_t wanted) {
  // Kept free for what the commands open while the logs are open: the directory listing and
  // each new log's start line (--follow), the output.
  constexpr std::uint64_t kReserve = 16;
  const std::uint64_t in_use = open_descriptors();
  // More descriptors are allowed for the asking: all logs open at once is the fastest merge.
  const std::uint64_t allowed = raise_open_files(wanted + in_use + kReserve);
  return allowed > in_use + kReserve ? static_cast<std::size_t>(allowed - in_use - kReserve) : 1;
}

}  // namespace dtrain::cli
