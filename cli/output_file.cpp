#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "common/errors.hpp"

namespace dtrain::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBufferBytes = std::size_t{64} << 10;

// As input files name them (common/input_file.cpp), for "got ...".
std::string special_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

// The record of `run_dirs` that is the file `st` describes, and its run directory.
void find_run_record(const struct stat& st, const std::vector<std::string>& run_dirs,
                     PathFacts& facts) {
  for (const auto& dir : run_dirs) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (!is_run_record_name(it->path().filename().string())) continue;
      struct stat record {};
      // stat, not lstat: a record that is a link is read through it, so its target is the record.
      if (::stat(it->path().c_str(), &record) == 0 && record.st_dev == st.st_dev &&
          record.st_ino == st.st_ino) {
        facts.run_record = it->path().string();
        facts.record_of = dir;
        return;
      }
    }
  }
}

}  // namespace

PathFacts look_at_output_path(const std::string& path, const std::vector<std::string>& run_dirs) {
  PathFacts facts;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    // Nothing there, or a file where a directory was expected on the way: the write says which.
    if (errno == ENOENT || errno == ENOTDIR) return facts;
    facts.kind = PathFacts::Kind::kUnreadable;
    facts.error = std::strerror(errno);
    return facts;
  }
  const bool link = S_ISLNK(st.st_mode);
  if (link && ::stat(path.c_str(), &st) != 0) {
    const int error = errno;
    if (error == ELOOP) {
      facts.kind = PathFacts::Kind::kSymlinkLoop;
      facts.error = std::strerror(error);
    } else if (error == ENOENT || error == ENOTDIR) {
      facts.kind = PathFacts::Kind::kDanglingSymlink;
      std::error_code ec;
      facts.link_target = fs::read_symlink(path, ec).string();
    } else {
      facts.kind = PathFacts::Kind::kUnreadable;
      facts.error = std::strerror(error);
    }
    return facts;
  }
  if (S_ISDIR(st.st_mode)) {
    facts.kind = PathFacts::Kind::kDirectory;
  } else if (!S_ISREG(st.st_mode)) {
    facts.kind = PathFacts::Kind::kSpecial;
    facts.special = special_kind(st.st_mode);
  } else {
    facts.kind = PathFacts::Kind::kRegular;
    if (link) {
      std::error_code ec;
      facts.resolved = fs::canonical(path, ec).string();
      if (ec) {
        facts.kind = PathFacts::Kind::kUnreadable;
        facts.error = ec.message();
        return facts;
      }
    }
    find_run_record(st, run_dirs, facts);
  }
  return facts;
}

OutputTarget resolve_output(const OutputRequest& request,
                            const std::vector<std::string>& run_dirs) {
  return choose_output(
      request, [&](const std::string& path) { return look_at_output_path(path, run_dirs); });
}

OutputFile::OutputFile(OutputTarget target) : target_(std::move(target)) {
  buffer_.reserve(kBufferBytes);
  if (target_.standard_output) {
    fd_ = STDOUT_FILENO;
    return;
  }
  partial_ = target_.file + ".partial-" + std::to_string(::getpid());
  // O_EXCL | O_NOFOLLOW: a file or a link already of that name is never written through.
  fd_ = ::open(partial_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    throw UsageError(target_.subject + ": cannot write it: " + std::strerror(errno));
  }
  struct stat replaced {};
  if (target_.replaces_file && ::stat(target_.file.c_str(), &replaced) == 0) {
    ::fchmod(fd_, replaced.st_mode & 07777);  // best effort: the bytes matter, not the mode
  }
}

OutputFile::~OutputFile() {
  if (fd_ >= 0 && fd_ != STDOUT_FILENO) ::close(fd_);
  if (!partial_.empty() && !committed_) ::unlink(partial_.c_str());
}

void OutputFile::write(std::string_view bytes) {
  if (buffer_.size() + bytes.size() > kBufferBytes) flush();
  if (bytes.size() >= kBufferBytes) {
    buffer_.assign(bytes);
    flush();
    return;
  }
  buffer_.append(bytes);
}

void OutputFile::flush() {
  std::string_view rest = buffer_;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd_, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw Failure(target_.subject + ": cannot write it: " + std::strerror(errno));
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  buffer_.clear();
}

void OutputFile::commit() {
  flush();
  if (target_.standard_output) {
    committed_ = true;
    return;
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    throw Failure(target_.subject + ": cannot write it: " + std::strerror(errno));
  }
  if (std::rename(partial_.c_str(), target_.file.c_str()) != 0) {
    throw Failure(target_.subject + ": cannot rename " + partial_ + " to " + target_.file + ": " +
                  std::strerror(errno));
  }
  committed_ = true;
}

void write_file_atomically(const OutputTarget& target, std::string_view text) {
  OutputFile out(target);
  out.write(text);
  out.commit();
}

}  // namespace dtrain::cli
