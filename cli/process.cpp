#include "process.hpp"
#include "common/child_process.hpp"
#include "common/signal_forwarding.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

extern char** environ;

namespace dtrain::cli {

JobEnd run_job(const std::vector<std::string>& argv) {
  // Installed before the start, so that a signal that comes before the job exists is kept.
  SignalForwarding signals;
  // A group of its own: a terminal's Ctrl-C reaches this process, which passes it on once (in the
  // terminal's group, mpirun would get it twice: below); a checkpoint signal sent to the group
  // reaches the job's processes and not this one. The stopping signals go to the job's first
  // process, and each process passes them on to the next once (`timeout --foreground`, `dtrain
  // supervise`, mpirun): Open MPI's mpirun takes a second SIGTERM or SIGINT, which a signal to the
  // group would add, for "die now" and may leave its ranks running. The checkpoint signals go to
  // the whole group: the walltime's `timeout` ignores them (templates/local.sh.tmpl), and the
  // supervisor or mpirun under it gets them there.
  SpawnOptions options;
  options.own_group = true;
  options.no_terminal_stdin = true;
  const SpawnedEnd end = spawn_forwarding(signals, argv, options, "dtrain");
  if (end.exec_error != 0) {
    throw std::runtime_error("dtrain: cannot start " + argv[0] + ": " +
                             std::strerror(end.exec_error));
  }
  return {exit_code_of(end.wait_status), signals.last_signal()};
}

Captured run_capturing(const std::vector<std::string>& argv) {
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("dtrain: pipe: " + std::string(std::strerror(errno)));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    throw std::runtime_error("dtrain: pipe: " + std::string(std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  Captured result;
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    result.status = exec_failure_status(rc);
    result.err = argv[0] + ": " + std::strerror(rc);
    return result;
  }
  // Both pipes drained together, so a chatty stderr cannot block the child on a full stdout.
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& fd : fds) {
    if (fd.fd >= 0) close(fd.fd);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("dtrain: waiting for " + argv[0] + " failed");
  }
  result.status = exit_code_of(status);
  return result;
}

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/bin:/bin";
  while (true) {
    const std::size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    if (!dir.empty()) {
      const std::string candidate = dir + "/" + program;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    if (colon == std::string_view::npos) return "";
    dirs.remove_prefix(colon + 1);
  }
}

std::string self_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("dtrain: cannot find its own executable: " + ec.message());
  return path.string();
}

std::string read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace dtrain::cli
