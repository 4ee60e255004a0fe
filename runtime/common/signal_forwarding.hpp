// Passing the job's signals on (common/job_signals.hpp): every dtrain process that stands between
// the sender (a scheduler, a person, a terminal) and the ranks and waits for a child — `dtrain
// submit` on the local site, `dtrain supervise`, `dtrain run-rank`'s logger — catches each of them
// and sends it on, so that no signal is swallowed on the way and none leaves a child behind.
// One implementation of the handlers, so that each of those processes forwards the same list.
#pragma once

#include <signal.h>
#include <sys/types.h>

namespace dtrain {

class SignalForwarding {
 public:
  // Installs the forwarding handlers for every job signal, and SIGCONT when `with_cont` (a
  // launcher wakes a stopped rank before it kills it, and the rank must wake too; CONT is never
  // recorded as received). Handlers restart interrupted system calls. The previous handlers come
  // back with the destructor. One at a time per process: the handlers reach it through globals.
  explicit SignalForwarding(bool with_cont = false);
  ~SignalForwarding();
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

  // Where the signals go from now on: a process (pid > 0), a process group (-pgid), or nowhere
  // (0: they are only recorded).
  void forward_to(pid_t target) noexcept { forward_to(target, target); }
  // The same, with the signals that do not stop the job (JobSignal::stops false: the checkpoint
  // signals) going to `checkpoint_target` instead.
  void forward_to(pid_t target, pid_t checkpoint_target) noexcept;

  // Starting a child that is to get the signals, without losing one or running our handler in
  // it: block() the job signals (returning the mask to give back), fork or spawn, in the child
  // reset_in_child(&mask) (or spawn with that mask; posix_spawn resets handlers itself), then
  // start_forwarding(...) in the parent: it sets the targets, sends the last signal received
  // before the block to its target, and unblocks, so that those that came meanwhile are
  // forwarded as they are delivered. On failure, unblock(mask).
  static sigset_t block() noexcept;
  void start_forwarding(pid_t target, pid_t checkpoint_target, const sigset_t& mask) noexcept;
  static void unblock(const sigset_t& mask) noexcept;

  // The last job signal received (a number, not CONT); 0 while none was.
  int last_signal() const noexcept;
  // Whether one of them asked to stop the job (JobSignal::stops), rather than to checkpoint.
  bool stopping() const noexcept;

  // For a forked child before exec: every job signal back to its default action, so that the
  // program started there acts on them as if started by a shell (SIG_IGN survives exec; a
  // handler does not, but a signal arriving before exec would run ours), then the signal mask
  // `mask` when one is given (block()'s). Async-signal-safe.
  static void reset_in_child(const sigset_t* mask = nullptr) noexcept;
};

}  // namespace dtrain
