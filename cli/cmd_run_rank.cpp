// `dtrain run-rank --run-dir DIR -- CMD ARGS...`: what every rank of a dtrain job script runs.
// It learns its rank from the launcher, exports the DTRAIN_* rank variables, runs CMD with its
// stdout and stderr on pipes, writes each line with a timestamp to DIR/rank-NNNNN.log while
// passing it through unchanged, forwards termination signals, and exits with CMD's status. The log
// starts with a line naming the rank, its host and the command and ends with one saying how the
// command ended (rundir/rank_lines.hpp), so `dtrain logs` can tell a rank that exited from one
// that went silent.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "affinity/launcher_env.hpp"
#include "affinity/rank_env.hpp"
#include "commands.hpp"
#include "plan/errors.hpp"
#include "rank_log.hpp"
#include "rundir/rank_lines.hpp"

namespace dtrain::cli {
namespace {

struct RunRankOptions {
  std::string run_dir;
  std::vector<std::string> command;
};

// A signal handler can only reach the child through a global.
volatile sig_atomic_t g_child_pid = 0;
// Set when the launcher or scheduler is stopping the job (not for USR1/USR2, the checkpoint
// signals): it will send SIGKILL soon, so the exit line must not wait for stray output.
volatile sig_atomic_t g_stopping = 0;

void forward_signal(int sig) {
  if (sig != SIGUSR1 && sig != SIGUSR2) g_stopping = 1;
  if (g_child_pid > 0) kill(static_cast<pid_t>(g_child_pid), sig);
}

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error("dtrain: run-rank: " + what + ": " + std::strerror(errno));
}

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // a closed terminal must not kill the rank; the log file still has the line
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

class RankLog {
 public:
  explicit RankLog(const std::string& path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw system_error("cannot open rank log " + path);
  }
  ~RankLog() {
    if (fd_ >= 0) ::close(fd_);
  }
  RankLog(const RankLog&) = delete;
  RankLog& operator=(const RankLog&) = delete;

  void line(std::string_view text) {
    std::string out = format_log_timestamp(std::chrono::system_clock::now());
    out += ' ';
    out.append(text);
    out += '\n';
    write_all(fd_, out);
  }

 private:
  int fd_ = -1;
};

struct Stream {
  int fd;
  int passthrough_fd;
  std::unique_ptr<LineSplitter> splitter;
};

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "unknown-host";
  return name;
}

rundir::RankExit rank_exit(int rank, int status) {
  rundir::RankExit e;
  e.rank = rank;
  if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
  } else {
    e.status = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  return e;
}

int wait_status_to_exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

int run_rank(const RunRankOptions& opts) {
  auto info = affinity::detect_launcher(affinity::current_environment());
  if (!info) {
    std::string names;
    for (const auto& n : affinity::launcher_variables()) names += (names.empty() ? "" : ", ") + n;
    throw plan::UsageError(
        "dtrain: run-rank: expected to be started by a launcher (mpirun, srun, mpiexec); none of " +
        names + " is set");
  }
  std::error_code ec;
  std::filesystem::create_directories(opts.run_dir, ec);
  if (ec) {
    throw plan::UsageError("dtrain: run-rank: --run-dir " + opts.run_dir +
                           ": cannot create it: " + ec.message());
  }
  RankLog log(opts.run_dir + "/" + rank_file_name(info->rank, "log"));

  for (const auto& [name, value] : affinity::rank_place_environment(
           {info->rank, info->size, info->local_rank, info->local_size})) {
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ::setenv("DTRAIN_RUN_DIR", std::filesystem::absolute(opts.run_dir).c_str(), 1);

  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw system_error("pipe");
  }
  std::vector<char*> argv;
  for (const auto& w : opts.command) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) throw system_error("fork");
  if (pid == 0) {
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    ::execvp(argv[0], argv.data());
    std::string msg =
        "dtrain: run-rank: cannot run " + opts.command[0] + ": " + std::strerror(errno) + "\n";
    write_all(STDERR_FILENO, msg);
    ::_exit(127);
  }
  g_child_pid = pid;
  log.line(rundir::format_rank_start({info->rank, info->size, host_name(), info->local_rank,
                                      info->local_size, static_cast<long>(pid),
                                      rundir::join_command(opts.command)}));
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGQUIT}) {
    struct sigaction sa {};
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, nullptr);
  }

  Stream streams[2] = {
      {out_pipe[0], STDOUT_FILENO, nullptr},
      {err_pipe[0], STDERR_FILENO, nullptr},
  };
  for (auto& s : streams) {
    const int passthrough = s.passthrough_fd;
    s.splitter = std::make_unique<LineSplitter>([&log, passthrough](std::string_view line) {
      log.line(line);
      std::string out(line);
      out += '\n';
      write_all(passthrough, out);
    });
  }

  int status = 0;
  bool exited = false;
  int open_streams = 2;
  char buf[65536];
  // Once the command has exited, a grandchild it left behind may hold the pipes open; give the
  // remaining output a short grace period instead of waiting for that grandchild. While the job is
  // being stopped, one idle poll is enough: Open MPI follows SIGTERM with SIGKILL after about a
  // second, and the exit line must be written before that.
  int idle_after_exit_ms = 0;
  while (open_streams > 0 && idle_after_exit_ms < (g_stopping ? 100 : 500)) {
    pollfd fds[2];
    nfds_t n = 0;
    Stream* order[2];
    for (auto& s : streams) {
      if (s.fd < 0) continue;
      fds[n] = {s.fd, POLLIN, 0};
      order[n++] = &s;
    }
    int ready = ::poll(fds, n, 100);
    if (ready < 0 && errno != EINTR) throw system_error("poll");
    bool got_data = false;
    for (nfds_t i = 0; ready > 0 && i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t r = ::read(fds[i].fd, buf, sizeof buf);
      if (r > 0) {
        order[i]->splitter->feed(std::string_view(buf, static_cast<std::size_t>(r)));
        got_data = true;
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        order[i]->splitter->finish();
        ::close(order[i]->fd);
        order[i]->fd = -1;
        --open_streams;
      }
    }
    if (!exited && ::waitpid(pid, &status, WNOHANG) == pid) exited = true;
    if (exited) idle_after_exit_ms = got_data ? 0 : idle_after_exit_ms + 100;
  }
  for (auto& s : streams) {
    if (s.fd >= 0) {
      s.splitter->finish();
      ::close(s.fd);
    }
  }
  while (!exited) {
    if (::waitpid(pid, &status, 0) == pid)
      exited = true;
    else if (errno != EINTR)
      throw system_error("waitpid");
  }
  g_child_pid = 0;
  log.line(rundir::format_rank_exit(rank_exit(info->rank, status)));
  return wait_status_to_exit_code(status);
}

}  // namespace

void register_run_rank(CLI::App& app, Action& action) {
  auto opts = std::make_shared<RunRankOptions>();
  auto* cmd = app.add_subcommand(
      "run-rank",
      "Run one rank of a job: log its output to RUN_DIR/rank-NNNNN.log (used by job scripts)");
  cmd->add_option("--run-dir", opts->run_dir, "Run directory for the rank's log")
      ->envname("DTRAIN_RUN_DIR")
      ->required();
  cmd->add_option("command", opts->command, "The rank's command and its arguments, after --")
      ->required();
  cmd->callback([opts, &action] { action = [opts] { return run_rank(*opts); }; });
}

}  // namespace dtrain::cli
