#include "rank_prefix.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace dtrain::cli {
namespace {

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the terminal is gone: the rank log still has every line
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

std::string prefixed_lines(std::string_view prefix, std::string_view chunk, std::string& pending) {
  std::string out;
  while (!chunk.empty()) {
    const auto nl = chunk.find('\n');
    if (nl == std::string_view::npos) {
      pending.append(chunk);
      break;
    }
    out.append(prefix).append(pending).append(chunk.substr(0, nl + 1));
    pending.clear();
    chunk.remove_prefix(nl + 1);
  }
  return out;
}

RankPrefixer::RankPrefixer(int rank) : prefix_("[" + std::to_string(rank) + "] ") {
  if (::pipe2(out_, O_CLOEXEC) != 0 || ::pipe2(err_, O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    close_fd(out_[0]);
    close_fd(out_[1]);
    throw std::runtime_error("dtrain: run-rank: pipe: " + why);
  }
  thread_ = std::thread([this] { run(); });
}

RankPrefixer::~RankPrefixer() { close_and_drain(); }

void RankPrefixer::close_and_drain() {
  close_fd(out_[1]);
  close_fd(err_[1]);
  if (thread_.joinable()) thread_.join();
  close_fd(out_[0]);
  close_fd(err_[0]);
}

void RankPrefixer::run() {
  struct Stream {
    int read_fd;
    int to;
    std::string pending;
  };
  Stream streams[2] = {{out_[0], STDOUT_FILENO, {}}, {err_[0], STDERR_FILENO, {}}};
  int open = 2;
  char buf[65536];
  while (open > 0) {
    pollfd fds[2];
    for (int i = 0; i < 2; ++i) fds[i] = {streams[i].read_fd, POLLIN, 0};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < 2; ++i) {
      Stream& s = streams[i];
      if (s.read_fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(s.read_fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        // The write end closed: an unfinished last line still goes out, with its prefix.
        if (!s.pending.empty()) write_all(s.to, prefix_ + s.pending + "\n");
        s.read_fd = -1;  // poll skips a negative fd; the destructor closes the read end
        --open;
        continue;
      }
      write_all(s.to, prefixed_lines(prefix_, std::string_view(buf, static_cast<std::size_t>(n)),
                                     s.pending));
    }
  }
}

}  // namespace dtrain::cli
