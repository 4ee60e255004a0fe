#include "task_output.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <string_view>

namespace dtrain::spank {
namespace {

volatile sig_atomic_t g_child = 0;  // a signal handler reaches the child only through a global

void forward(int sig) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error("dtrain: --dtrain-run-dir: " + what + ": " + std::strerror(errno));
}

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a vanished reader must not stop the log
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

// "2026-11-22T10:00:00.123456Z ", as cli/rank_log.cpp writes it.
std::string timestamp() {
  using namespace std::chrono;
  const auto micros = duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(micros / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long>(micros % 1000000));
  return buf;
}

struct Stream {
  int fd;           // read end of the task's pipe
  int passthrough;  // where the output went before: srun's stream
  std::string partial;
};

void emit(Stream& s, int log_fd, std::string_view line) {
  write_all(log_fd, timestamp() + std::string(line) + "\n");
  write_all(s.passthrough, std::string(line) + "\n");
}

void feed(Stream& s, int log_fd, std::string_view bytes) {
  s.partial.append(bytes);
  std::size_t start = 0;
  for (std::size_t nl; (nl = s.partial.find('\n', start)) != std::string::npos; start = nl + 1) {
    emit(s, log_fd, std::string_view(s.partial).substr(start, nl - start));
  }
  s.partial.erase(0, start);
  if (s.partial.size() > (1u << 20)) {  // a runaway line is cut rather than buffered forever
    emit(s, log_fd, s.partial);
    s.partial.clear();
  }
}

[[noreturn]] void run_logger(pid_t child, Stream (&streams)[2], int log_fd) {
  g_child = child;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGQUIT, SIGCONT}) {
    struct sigaction sa {};
    sa.sa_handler = forward;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(sig, &sa, nullptr);
  }
  int status = 0;
  bool exited = false;
  int open = 2;
  int idle_ms = 0;
  char buf[65536];
  // A grandchild left behind by the program may hold the pipes open: after the program exits,
  // stop once its output has been quiet for half a second.
  while (open > 0 && idle_ms < 500) {
    pollfd fds[2];
    Stream* which[2];
    nfds_t n = 0;
    for (auto& s : streams) {
      if (s.fd < 0) continue;
      fds[n] = {s.fd, POLLIN, 0};
      which[n++] = &s;
    }
    const int ready = ::poll(fds, n, 100);
    bool got = false;
    for (nfds_t i = 0; ready > 0 && i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t r = ::read(fds[i].fd, buf, sizeof buf);
      if (r > 0) {
        feed(*which[i], log_fd, std::string_view(buf, static_cast<std::size_t>(r)));
        got = true;
      } else if (r == 0 || errno != EINTR) {
        ::close(which[i]->fd);
        which[i]->fd = -1;
        --open;
      }
    }
    if (!exited && ::waitpid(child, &status, WNOHANG) == child) exited = true;
    if (exited) idle_ms = got ? 0 : idle_ms + 100;
  }
  for (auto& s : streams) {
    if (!s.partial.empty()) emit(s, log_fd, s.partial);
  }
  while (!exited) {
    if (::waitpid(child, &status, 0) == child || errno != EINTR) exited = true;
  }
  if (WIFSIGNALED(status)) {
    // Die the same way, so Slurm reports the signal as it would without the logger.
    ::signal(WTERMSIG(status), SIG_DFL);
    ::kill(::getpid(), WTERMSIG(status));
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

}  // namespace

void tee_task_output(const std::string& dir, int rank) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw std::runtime_error("dtrain: --dtrain-run-dir: cannot create " + dir + ": " +
                             ec.message());
  }
  char name[32];
  std::snprintf(name, sizeof name, "/rank-%05d.log", rank);
  const std::string path = dir + name;
  const int log_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw system_error("cannot open " + path);
  int out[2];
  int err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(log_fd);
    throw system_error("pipe");
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(log_fd);
    ::close(out[0]);
    ::close(out[1]);
    throw system_error("pipe");
  }
  const int old_out = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  const int old_err = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  const pid_t child = ::fork();
  if (child < 0) throw system_error("fork");
  if (child == 0) {
    // The task: its stdout/stderr now feed the logger (dup2 clears FD_CLOEXEC on the copies).
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    for (int fd : {out[0], out[1], err[0], err[1], old_out, old_err, log_fd}) ::close(fd);
    return;
  }
  ::close(out[1]);
  ::close(err[1]);
  ::close(STDIN_FILENO);  // the task reads stdin; the logger must not steal its input
  Stream streams[2] = {{out[0], old_out, {}}, {err[0], old_err, {}}};
  run_logger(child, streams, log_fd);
}

}  // namespace dtrain::spank
