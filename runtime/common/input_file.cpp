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

// Why open_input() gave no descriptor, naming `path` and what was expected of it.
InputFileError refusal(const OpenedInput& in, const std::string& path, const std::string& what) {
  if (in.error != 0) {
    return InputFileError("dtrain: " + path + ": cannot open it: " + std::strerror(in.error) +
                          "; expected " + what);
  }
  return InputFileError("dtrain: " + path + ": expected " + what + ", got " + in.kind);
}

// open_input(), or an InputFileError.
Fd open_regular(const std::string& path, const std::string& what, std::uint64_t& size) {
  const OpenedInput in = open_input(path);
  if (in.fd < 0) throw refusal(in, path, what);
  size = in.size;
  return Fd(in.fd);
}

std::string too_large(const std::string& path, const std::string& what, std::size_t max_bytes,
                      const std::string& got) {
  return "dtrain: " + path + ": expected " + what + " of at most " + std::to_string(max_bytes) +
         " bytes, got " + got;
}

std::string read_open_file(const Fd& fd, std::uint64_t size, const std::string& path,
                           const std::string& what, std::size_t max_bytes) {
  if (size > max_bytes) {
    throw InputFileError(too_large(path, what, max_bytes, std::to_string(size) + " bytes"));
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

}  // namespace

OpenedInput open_input(const std::string& path) {
  OpenedInput out;
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer. It has no effect on the
  // reads of a regular file, the only kind read afterwards.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    out.error = errno;
    return out;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    out.error = errno;
    ::close(fd);
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    out.kind = kind_of(st.st_mode);
    ::close(fd);
    return out;
  }
  out.fd = fd;
  out.size = static_cast<std::uint64_t>(st.st_size);
  return out;
}

void check_input_file(const std::string& path, const std::string& what,
                      const std::string& component) {
  std::uint64_t size = 0;
  try {
    open_regular(path, what, size);
  } catch (const InputFileError& e) {
    if (component.empty()) throw;
    throw InputFileError("dtrain: " + component + ": " + std::string(e.what()).substr(8));
  }
}

std::string read_input_file(const std::string& path, const std::string& what,
                            std::size_t max_bytes) {
  std::uint64_t size = 0;
  const Fd fd = open_regular(path, what, size);
  return read_open_file(fd, size, path, what, max_bytes);
}

std::optional<std::string> read_input_file_if_present(const std::string& path,
                                                      const std::string& what,
                                                      std::size_t max_bytes) {
  const OpenedInput in = open_input(path);
  if (in.error == ENOENT) return std::nullopt;
  if (in.fd < 0) throw refusal(in, path, what);
  const Fd fd(in.fd);
  return read_open_file(fd, in.size, path, what, max_bytes);
}

}  // namespace dtrain
