// `dtrain run-rank --run-dir DIR -- CMD ARGS...`: what every rank of a dtrain job script runs.
// It learns its rank from the launcher, exports the DTRAIN_* rank variables and runs CMD through
// records::tee_output, which writes each line of CMD's stdout and stderr with a timestamp to
// DIR/rank-NNNNN.log while passing it through unchanged, forwards termination signals, and frames
// the log with a start line (rank, host, command) and an exit line (records/rank_lines.hpp), so
// `dtrain logs` can tell a rank that exited from one that went silent. It exits with CMD's status.
// With DTRAIN_RANK_PREFIX=1 the lines it passes on begin with "[RANK] " (rank_prefix.hpp).
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common/child_process.hpp"
#include "common/errors.hpp"
#include "common/signal_forwarding.hpp"
#include "common/words.hpp"
#include "launch/launcher_env.hpp"
#include "launch/rank_place.hpp"
#include "live_watch.hpp"
#include "rank_prefix.hpp"
#include "records/live_status.hpp"
#include "records/output_tee.hpp"
#include "records/rank_alarm.hpp"
#include "records/rank_files.hpp"
#include "records/rank_lines.hpp"

namespace dtrain::cli {
namespace {

constexpr std::string_view kWho = "dtrain: run-rank";

struct RunRankOptions {
  std::string run_dir;
  std::vector<std::string> command;
};

// Owns the rank log's descriptor.
class RankLog {
 public:
  explicit RankLog(const std::string& path) : fd_(records::open_rank_log(path)) {
    if (fd_ < 0) {
      throw std::runtime_error(std::string(kWho) + ": cannot open rank log " + path + ": " +
                               std::strerror(errno));
    }
  }
  ~RankLog() { ::close(fd_); }
  RankLog(const RankLog&) = delete;
  RankLog& operator=(const RankLog&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void exec_command(const ExecArgs& command) {
  // The program gets the default action of every job signal, whatever the launch chain ignored
  // (the local site's `timeout` runs with the checkpoint signals ignored: templates/local.sh.tmpl).
  SignalForwarding::reset_in_child();
  exec_or_exit(command, kWho.data());
}

int run_rank(const RunRankOptions& opts) {
  // The environment as the launcher started this logger, read once: who the rank is, and what the
  // commands before it hand it (DTRAIN_ATTEMPT from `supervise`, DTRAIN_RANK_PREFIX from `dtrain
  // run`, DTRAIN_HANG_AFTER and DTRAIN_ON_HANG from the spec's hang_after and on_hang).
  const launch::Environment env = launch::current_environment();
  auto info = launch::detect_launcher(env);
  if (!info) {
    throw UsageError(
        "dtrain: run-rank: expected to be started by a launcher (mpirun, srun, mpiexec); none of " +
        join_alternatives(launch::launcher_variables(), ", ") + " is set");
  }
  std::error_code ec;
  std::filesystem::create_directories(opts.run_dir, ec);
  if (ec) {
    throw UsageError("dtrain: run-rank: --run-dir " + opts.run_dir +
                     ": cannot create it: " + ec.message());
  }
  const RankLog log(opts.run_dir + "/" +
                    records::rank_file_name(info->rank, records::kLogExtension));

  for (const auto& [name, value] : launch::rank_place_environment(
           {info->rank, info->size, info->local_rank, info->local_size})) {
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ::setenv("DTRAIN_RUN_DIR", std::filesystem::absolute(opts.run_dir).c_str(), 1);

  const LiveWatchSettings watch_settings = live_watch_settings(env);
  const records::RankAlarmSocket alarm = records::RankAlarmSocket::open();
  // The rank's live status page (records/live_status.hpp), for the hang watch below; without one
  // (no memfd) the rank runs unwatched, as before.
  const std::unique_ptr<records::LivePage> live =
      watch_settings.hang_after ? records::LivePage::create() : nullptr;
  const ExecArgs command(opts.command);  // made before the fork: the child only execs
  const records::TeedChild child = records::fork_with_output_pipes(kWho);
  if (child.pid == 0) {
    // Where Yama restricts ptrace (ptrace_scope 1), only a declared tracer and its descendants may
    // attach: the hang watch's debugger is this logger's child (stack_capture.hpp). Yama keeps it
    // across exec; without Yama the call fails and nothing changes.
    ::prctl(PR_SET_PTRACER, static_cast<unsigned long>(::getppid()), 0, 0, 0);
    alarm.hand_to_child();
    if (live) live->hand_to_child();
    exec_command(command);
  }
  const auto attempt = env.find("DTRAIN_ATTEMPT");
  const records::RankStart start{
      info->rank,
      info->size,
      records::this_host(),
      info->local_rank,
      info->local_size,
      0,
      records::join_command(opts.command),
      records::attempt_from_text(attempt == env.end() ? "" : attempt->second)};
  std::optional<LiveWatch> watch;
  if (live) {
    watch.emplace(watch_settings, opts.run_dir, info->rank, info->size, start.host, child.pid,
                  *live);
  }
  // Made after the fork, so that the child, which only execs, never shares its thread.
  std::optional<RankPrefixer> prefixer;
  if (const auto prefix = env.find(kRankPrefixVariable);
      prefix != env.end() && prefix->second == "1") {
    prefixer.emplace(info->rank);
  }
  const int status =
      records::tee_output(child,
                          {log.fd(), prefixer ? prefixer->out_fd() : STDOUT_FILENO,
                           prefixer ? prefixer->err_fd() : STDERR_FILENO, alarm.fd()},
                          start, kWho);
  if (prefixer) prefixer->close_and_drain();
  watch.reset();
  return exit_code_of(status);
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
