#include "records/output_tee.hpp"
#include "common/child_process.hpp"
#include "common/signal_forwarding.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "records/log_line.hpp"
#include "records/rank_alarm.hpp"

namespace dtrain::records {
namespace {

// Whether `pid` has ended, with its wait status, leaving it unreaped (a zombie) for reap(): the
// other ranks of its node read how it ended from /proc while it is one
// (comm/lost_peers/peer_watch.hpp). `block`: wait for the end. False (errno set) when waitid fails.
bool peek_exit(pid_t pid, int& status, bool block) {
  siginfo_t info{};
  const int flags = WEXITED | WNOWAIT | (block ? 0 : WNOHANG);
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, flags) != 0) return false;
  if (info.si_pid != pid) return false;  // WNOHANG: still running
  switch (info.si_code) {
    case CLD_EXITED:
      status = (info.si_status & 0xff) << 8;
      break;
    case CLD_DUMPED:
      status = info.si_status | 0x80;
      break;
    default:  // CLD_KILLED
      status = info.si_status;
  }
  return true;
}

std::runtime_error system_error(std::string_view who, const std::string& what) {
  return std::runtime_error(std::string(who) + ": " + what + ": " + std::strerror(errno));
}

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    // A closed terminal or a vanished reader must not stop the rank; the log still has the line.
    if (n <= 0) return;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

void log_line(int log_fd, std::string_view text) {
  std::string out = format_log_time(std::chrono::system_clock::now());
  out += ' ';
  out.append(text);
  out += '\n';
  write_all(log_fd, out);
}

struct Stream {
  int fd;
  LineSplitter splitter;
};

// Copies until both pipes close or, once the child has exited, its output has been quiet for the
// grace period. A grandchild the command left behind may hold the pipes open; the logger must not
// wait for it. While the job is being stopped one idle poll is enough: Open MPI follows SIGTERM
// with SIGKILL after about a second, and the exit line must be written before that.
bool copy_output(pid_t pid, Stream (&streams)[2], int& status, const SignalForwarding& signals,
                 std::string_view who) {
  bool exited = false;
  int open_streams = 0;
  for (const auto& s : streams) open_streams += s.fd >= 0 ? 1 : 0;
  char buf[65536];
  int idle_after_exit_ms = 0;
  while (open_streams > 0 && idle_after_exit_ms < (signals.stopping() ? 100 : 500)) {
    pollfd fds[2];
    Stream* order[2];
    nfds_t n = 0;
    for (auto& s : streams) {
      if (s.fd < 0) continue;
      fds[n] = {s.fd, POLLIN, 0};
      order[n++] = &s;
    }
    const int ready = ::poll(fds, n, 100);
    if (ready < 0 && errno != EINTR) throw system_error(who, "poll");
    bool got_data = false;
    for (nfds_t i = 0; ready > 0 && i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t r = ::read(fds[i].fd, buf, sizeof buf);
      if (r > 0) {
        order[i]->splitter.feed(std::string_view(buf, static_cast<std::size_t>(r)));
        got_data = true;
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        order[i]->splitter.finish();
        ::close(order[i]->fd);
        order[i]->fd = -1;
        --open_streams;
      }
    }
    if (!exited && peek_exit(pid, status, false)) exited = true;
    if (exited) idle_after_exit_ms = got_data ? 0 : idle_after_exit_ms + 100;
  }
  for (auto& s : streams) {
    if (s.fd >= 0) {
      s.splitter.finish();
      ::close(s.fd);
      s.fd = -1;
    }
  }
  return exited;
}

}  // namespace

TeedChild fork_with_output_pipes(std::string_view who) {
  int out[2];
  int err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw system_error(who, "pipe");
  if (::pipe2(err, O_CLOEXEC) != 0) {
    const int saved = errno;
    ::close(out[0]);
    ::close(out[1]);
    errno = saved;
    throw system_error(who, "pipe");
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int saved = errno;
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    errno = saved;
    throw system_error(who, "fork");
  }
  if (pid == 0) {
    // dup2 clears FD_CLOEXEC on the copies, so an exec keeps them as stdout and stderr.
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    return {0, -1, -1};
  }
  ::close(out[1]);
  ::close(err[1]);
  return {pid, out[0], err[0]};
}

int open_rank_log(const std::string& path) noexcept {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

std::string this_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "unknown-host";
  return name;
}

RankExit rank_exit(int rank, int wait_status) {
  RankExit e;
  e.rank = rank;
  e.signal = killing_signal(wait_status);
  if (e.signal == 0) e.status = exit_code_of(wait_status);
  return e;
}

int tee_output(const TeedChild& child, const TeeTargets& targets, RankStart start,
               std::string_view who) {
  // Every job signal goes to the child, and CONT: a launcher wakes a stopped rank before it kills
  // it, and the rank must wake too.
  SignalForwarding forwarding(/*with_cont=*/true);
  forwarding.forward_to(child.pid);
  start.pid = static_cast<long>(child.pid);
  log_line(targets.log_fd, format_rank_start(start));
  // Whether the child reported a lost peer itself (then the logger has nothing to add).
  bool named_loss = false;
  const auto sink = [&targets, &named_loss](int passthrough) {
    return [log_fd = targets.log_fd, passthrough, &named_loss](std::string_view line) {
      if (line.find(kLostPeerWords) != std::string_view::npos) named_loss = true;
      log_line(log_fd, line);
      std::string out(line);
      out += '\n';
      write_all(passthrough, out);
    };
  };
  Stream streams[2] = {{child.out_fd, LineSplitter(sink(targets.out_passthrough))},
                       {child.err_fd, LineSplitter(sink(targets.err_passthrough))}};
  int status = 0;
  bool exited = copy_output(child.pid, streams, status, forwarding, who);
  while (!exited) {
    if (peek_exit(child.pid, status, true)) {
      exited = true;
    } else if (errno != EINTR) {
      throw system_error(who, "waitpid");
    }
  }
  // A rank that failed stays a zombie for kAlarmWaitMs. Its node's other ranks can then read how it
  // ended (comm/lost_peers/peer_watch.hpp): one that exited with a failure (Open MPI's abort exits
  // 255) or died writing to a closed connection (SIGPIPE: Open MPI writes to a lost rank's socket
  // without MSG_NOSIGNAL) may be a victim of another rank's loss, and they wait for the alarm
  // naming the rank lost first instead of naming it. And the launcher, which ends the whole step
  // when it sees this task end, does so that much later: the ranks on other nodes have the time to
  // hear the alarm and say whom they lost (1 run in 20 of a 2 x 2 job had the step killed before).
  // An alarm reaching a victim's socket meanwhile is reported for it, unless it reported a loss
  // itself; one killed by another signal is the lost rank itself or one the launcher ended, and
  // its end is the news. Not while the job is being stopped (a signal passed on): then the rank
  // ended because of it, and the launcher's SIGKILL follows within about a second.
  const bool failed = exit_code_of(status) != 0 && !forwarding.stopping();
  const bool victim = is_victim_status(status);
  if (failed) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kAlarmWaitMs);
    if (victim && !named_loss) {
      if (const auto alarm =
              wait_for_alarm(targets.alarm_fd, start.rank, start.world_size, kAlarmWaitMs)) {
        const std::string line = alarm_line_for_rank(start.rank, *alarm);
        log_line(targets.log_fd, line);
        write_all(targets.err_passthrough, line + "\n");
      }
    }
    std::this_thread::sleep_until(until);
  }
  int reaped = 0;
  while (::waitpid(child.pid, &reaped, 0) < 0 && errno == EINTR) {
  }
  log_line(targets.log_fd, format_rank_exit(rank_exit(start.rank, status)));
  return status;
}

}  // namespace dtrain::records
