// The processes dtrain starts, in one place: how a child's end reads as an exit code and as blame
// (the "victim" rule), the status of a command that could not be run, and starting a command whose
// job signals are passed on to it (`dtrain submit`'s local job, `supervise`'s attempts). Every
// other file asks these functions; tests/check_layering.sh fails on WIFEXITED or execvp anywhere
// else in the product.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dtrain {

class SignalForwarding;

// waitpid's status as an exit code: the status of a process that exited, 128 + N for one killed
// by signal N, 1 otherwise.
int exit_code_of(int wait_status);

// The signal that killed the process, 0 when it was not killed by one.
int killing_signal(int wait_status);

// The shell's status for a command that could not be run: 127 when it was not found (ENOENT),
// 126 when it was found but cannot be executed.
int exec_failure_status(int error);

// Whether a rank that ended this way may be the victim of another rank's loss rather than the
// lost one: it exited with a failure (Open MPI's abort exits 255) or died writing to a closed
// connection (SIGPIPE: Open MPI writes to a lost rank's socket without MSG_NOSIGNAL). Killed by
// any other signal, it is the lost rank itself, or one its launcher ended. The rank's logger
// (records/output_tee.cpp) and the ranks on its node (comm/lost_peers/peer_watch.cpp) decide
// blame with it, in two processes, so it must be this one rule.
bool is_victim_status(int wait_status);

// A command's words as execvp takes them, made before a fork: the child then only execs (no
// allocation between fork and exec, which is what async-signal-safe asks of a child forked from a
// process that may have threads).
class ExecArgs {
 public:
  explicit ExecArgs(std::vector<std::string> words);
  ExecArgs(const ExecArgs&) = delete;
  ExecArgs& operator=(const ExecArgs&) = delete;
  const std::string& program() const { return words_.front(); }
  char* const* argv() const { return pointers_.data(); }

 private:
  std::vector<std::string> words_;
  std::vector<char*> pointers_;
};

// execvp(args); when that fails, writes "WHO: cannot run ARGV0: REASON" to stderr and _exits
// exec_failure_status(errno). Async-signal-safe (for a forked child): the message is written in
// pieces, nothing is allocated.
[[noreturn]] void exec_or_exit(const ExecArgs& args, const char* who) noexcept;

// execvp(argv) in place of this process; when that fails, writes "WHO: cannot run ARGV0: REASON"
// to stderr and returns exec_failure_status(errno) (`dtrain bind`, which has not forked).
int exec_in_place(const std::vector<std::string>& argv, std::string_view who);

struct SpawnOptions {
  // A process group of its own (the child leads it). Then a terminal's Ctrl-C reaches the parent
  // only, which passes it on once, and a signal sent to the group reaches the child's processes
  // and not the parent.
  bool own_group = false;
  // The child gets SIGKILL when the parent dies (prctl PR_SET_PDEATHSIG): a kill -9 of the parent
  // must not leave the child running.
  bool dies_with_parent = false;
  // stdin from /dev/null when it is a terminal: a background process group may not read it.
  bool no_terminal_stdin = false;
  // Variables the child gets set, and those it must not inherit (set after unset).
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<std::string> unset;
};

struct SpawnedEnd {
  int wait_status = 0;  // waitpid's, when the command ran
  int exec_error = 0;   // errno when the command could not be run (then it did not run)
};

// Runs argv as a child and waits for it, passing on every job signal `signals` receives meanwhile
// (common/signal_forwarding.hpp): the stopping ones to the child, the checkpoint ones to the child
// or, with own_group, to its whole group. A signal received before the child existed reaches it
// too. The forwarding targets nobody again when this returns. A command that could not be run
// (not found, not executable) is no exception: exec_error says why, and the caller words it.
// Throws std::runtime_error ("WHO: cannot start ARGV0: fork: ...", "WHO: waiting for ARGV0
// failed: ...") when the fork or the wait fails.
SpawnedEnd spawn_forwarding(SignalForwarding& signals, const std::vector<std::string>& argv,
                            const SpawnOptions& options, std::string_view who);

}  // namespace dtrain
