#include "common/child_process.hpp"
#include "common/signal_forwarding.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace dtrain {
namespace {

void write_text(const char* text) noexcept {
  (void)!::write(STDERR_FILENO, text, std::strlen(text));
}

// This process's environment with `options`' changes, as execvpe takes it: made before the fork.
std::vector<std::string> child_environment(const SpawnOptions& options) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    bool dropped = false;
    for (const auto& u : options.unset) dropped = dropped || name == u;
    for (const auto& [k, v] : options.set) dropped = dropped || name == k;
    if (!dropped) env.emplace_back(entry);
  }
  for (const auto& [k, v] : options.set) env.push_back(k + "=" + v);
  return env;
}

int wait_for(pid_t pid, const std::string& program, std::string_view who) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      throw std::runtime_error(std::string(who) + ": waiting for " + program +
                               " failed: " + std::strerror(errno));
    }
  }
  return status;
}

}  // namespace

int exit_code_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

int killing_signal(int wait_status) { return WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0; }

int exec_failure_status(int error) { return error == ENOENT ? 127 : 126; }

bool is_victim_status(int wait_status) {
  return (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) != 0) ||
         killing_signal(wait_status) == SIGPIPE;
}

ExecArgs::ExecArgs(std::vector<std::string> words) : words_(std::move(words)) {
  if (words_.empty()) throw std::invalid_argument("ExecArgs: expected a command, got none");
  pointers_.reserve(words_.size() + 1);
  for (auto& w : words_) pointers_.push_back(w.data());
  pointers_.push_back(nullptr);
}

void exec_or_exit(const ExecArgs& args, const char* who) noexcept {
  ::execvp(args.argv()[0], args.argv());
  const int error = errno;
  write_text(who);
  write_text(": cannot run ");
  write_text(args.argv()[0]);
  write_text(": ");
  write_text(std::strerror(error));
  write_text("\n");
  ::_exit(exec_failure_status(error));
}

int exec_in_place(const std::vector<std::string>& argv, std::string_view who) {
  const ExecArgs args(argv);
  ::execvp(args.argv()[0], args.argv());
  const int error = errno;
  const std::string message =
      std::string(who) + ": cannot run " + argv[0] + ": " + std::strerror(error) + "\n";
  write_text(message.c_str());
  return exec_failure_status(error);
}

SpawnedEnd spawn_forwarding(SignalForwarding& signals, const std::vector<std::string>& argv,
                            const SpawnOptions& options, std::string_view who) {
  const ExecArgs args(argv);
  std::vector<std::string> env_words = child_environment(options);
  std::vector<char*> envp;
  for (auto& e : env_words) envp.push_back(e.data());
  envp.push_back(nullptr);
  const bool null_stdin = options.no_terminal_stdin && ::isatty(STDIN_FILENO);
  // The child tells a failed exec through this pipe; a successful one closes it (close-on-exec).
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string(who) + ": pipe: " + std::strerror(errno));
  }
  const pid_t parent = ::getpid();
  // Blocked before the fork, so that a signal that comes before the child exists is kept.
  const sigset_t mask = SignalForwarding::block();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    SignalForwarding::unblock(mask);
    ::close(report[0]);
    ::close(report[1]);
    throw std::runtime_error(std::string(who) + ": cannot start " + argv[0] +
                             ": fork: " + std::strerror(error));
  }
  if (pid == 0) {
    // Until exec, a signal meant for the command must act on it, not run our handler.
    SignalForwarding::reset_in_child(&mask);
    if (options.own_group) ::setpgid(0, 0);
    if (options.dies_with_parent) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(128 + SIGKILL);  // it died before the line above
    }
    if (null_stdin) {
      const int fd = ::open("/dev/null", O_RDONLY);
      if (fd >= 0 && fd != STDIN_FILENO) {
        ::dup2(fd, STDIN_FILENO);
        ::close(fd);
      }
    }
    ::execvpe(args.argv()[0], args.argv(), envp.data());
    int error = errno;
    (void)!::write(report[1], &error, sizeof error);
    ::_exit(exec_failure_status(error));
  }
  ::close(report[1]);
  // Both sides, so that the group exists before either goes on (fails harmlessly once the child
  // has exec'd: it made the group itself then).
  if (options.own_group) ::setpgid(pid, pid);
  signals.start_forwarding(pid, options.own_group ? -pid : pid, mask);
  SpawnedEnd end;
  int error = 0;
  ssize_t n = 0;
  while ((n = ::read(report[0], &error, sizeof error)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof error)) end.exec_error = error;
  try {
    end.wait_status = wait_for(pid, argv[0], who);
  } catch (...) {
    signals.forward_to(0);
    throw;
  }
  signals.forward_to(0);
  return end;
}

}  // namespace dtrain
