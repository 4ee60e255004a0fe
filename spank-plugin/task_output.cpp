#include "task_output.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include "common/child_process.hpp"
#include "records/output_tee.hpp"
#include "records/rank_alarm.hpp"
#include "records/rank_files.hpp"

namespace dtrain::spank {
namespace {

constexpr std::string_view kWho = "dtrain: --dtrain-run-dir";

[[noreturn]] void run_logger(const records::TeedChild& child, int log_fd, int alarm_fd,
                             const records::RankStart& start) noexcept {
  ::close(STDIN_FILENO);  // the task reads stdin; the logger must not steal its input
  int status = 0;
  try {
    status =
        records::tee_output(child, {log_fd, STDOUT_FILENO, STDERR_FILENO, alarm_fd}, start, kWho);
  } catch (const std::exception& e) {
    // Inside slurmstepd's task: no exception may leave; the task goes on without its logger.
    const std::string msg = std::string(e.what()) + "\n";
    (void)!::write(STDERR_FILENO, msg.data(), msg.size());
    ::_exit(1);
  } catch (...) {
    ::_exit(1);
  }
  if (const int sig = killing_signal(status)) {
    // Die the same way, so Slurm reports the signal as it would without the logger.
    ::signal(sig, SIG_DFL);
    ::kill(::getpid(), sig);
    ::_exit(1);
  }
  ::_exit(exit_code_of(status));
}

}  // namespace

void tee_task_output(const std::string& dir, const records::RankStart& start) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw std::runtime_error(std::string(kWho) + ": cannot create " + dir + ": " + ec.message());
  }
  const std::string path = dir + "/" + records::rank_file_name(start.rank, records::kLogExtension);
  const int log_fd = records::open_rank_log(path);
  if (log_fd < 0) {
    throw std::runtime_error(std::string(kWho) + ": cannot open " + path + ": " +
                             std::strerror(errno));
  }
  records::RankAlarmSocket alarm = records::RankAlarmSocket::open();
  records::TeedChild child;
  try {
    child = records::fork_with_output_pipes(kWho);
  } catch (...) {
    ::close(log_fd);
    throw;
  }
  if (child.pid == 0) {
    ::close(log_fd);
    // The task: its stdout/stderr now feed the logger; the caller puts the alarm socket's
    // variable into the task's environment (slurmstepd builds it, not this process's).
    alarm.hand_to_child();
    alarm.release();
    return;
  }
  run_logger(child, log_fd, alarm.fd(), start);
}

}  // namespace dtrain::spank
