#include "common/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dtrain {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer. It has no effect on the
// reads of a regular file, the only kind read afterwards.
Fd open_regular(const std::string& path, const std::string& what, struct stat& st) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    throw InputFileError("dtrain: " + path + ": cannot open it: " + std::strerror(errno) +
                         "; expected " + what);
  }
  if (::fstat(fd.get(), &st) != 0) {
    throw InputFileError("dtrain: " + path + ": cannot read it: " + std::strerror(errno) +
                         "; expected " + what);
  }
  if (!S_ISREG(st.st_mode)) {
    throw InputFileError("dtrain: " + path + ": expected " + what + ", got " + kind_of(st.st_mode));
  }
  return fd;
}

std::string too_large(const std::string& path, const std::string& what, std::size_t max_bytes,
                      const std::string& got) {
  return "dtrain: " + path + ": expected " + what + " of at most " + std::to_string(max_bytes) +
         " bytes, got " + got;
}

}  // namespace

void check_input_file(const std::string& path, const std::string& what,
                      const std::string& component) {
  struct stat st {};
  try {
    open_regular(path, what, st);
  } catch (const InputFileError& e) {
    if (component.empty()) throw;
    throw InputFileError("dtrain: " + component + ": " + std::string(e.what()).substr(8));
  }
}

std::string read_input_file(const std::string& path, const std::string& what,
                            std::size_t max_bytes) {
  struct stat st {};
  Fd fd = open_regular(path, what, st);
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    throw InputFileError(too_large(path, what, max_bytes, std::to_string(st.st_size) + " bytes"));
  }
  // Bounded even if the file grows while it is read.
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw InputFileError("dtrain: " + path + ": cannot read it: " + std::strerror(errno) +
                           "; expected " + what);
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) throw InputFileError(too_large(path, what, max_bytes, "more"));
  }
  return text;
}

}  // namespace dtrain
