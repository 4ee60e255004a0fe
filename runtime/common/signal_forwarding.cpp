#include "common/signal_forwarding.hpp"
#include "common/job_signals.hpp"

#include <signal.h>

#include <cstddef>

namespace dtrain {
namespace {

// A handler reaches its state only through globals; sig_atomic_t keeps each access whole.
volatile sig_atomic_t g_target = 0;
volatile sig_atomic_t g_checkpoint_target = 0;
volatile sig_atomic_t g_last_signal = 0;
volatile sig_atomic_t g_stopping = 0;

// The job signals, then CONT.
constexpr std::size_t kHandled = kJobSignals.size() + 1;
struct sigaction g_previous[kHandled];
bool g_with_cont = false;

int handled_signal(std::size_t i) {
  return i < kJobSignals.size() ? kJobSignals[i].number : SIGCONT;
}

// Where `sig` goes: the checkpoint target for a job signal that does not stop the job, else the
// target (CONT too).
pid_t target_of(int sig) {
  for (const JobSignal& s : kJobSignals) {
    if (s.number == sig && !s.stops) return static_cast<pid_t>(g_checkpoint_target);
  }
  return static_cast<pid_t>(g_target);
}

extern "C" void forward_signal(int sig) {
  for (const JobSignal& s : kJobSignals) {
    if (s.number != sig) continue;
    g_last_signal = sig;
    if (s.stops) g_stopping = 1;
  }
  const pid_t target = target_of(sig);
  if (target != 0) ::kill(target, sig);
}

}  // namespace

SignalForwarding::SignalForwarding(bool with_cont) {
  g_target = 0;
  g_checkpoint_target = 0;
  g_last_signal = 0;
  g_stopping = 0;
  g_with_cont = with_cont;
  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < kHandled; ++i) {
    if (i < kJobSignals.size() || with_cont) ::sigaction(handled_signal(i), &sa, &g_previous[i]);
  }
}

SignalForwarding::~SignalForwarding() {
  g_target = 0;
  g_checkpoint_target = 0;
  for (std::size_t i = 0; i < kHandled; ++i) {
    if (i < kJobSignals.size() || g_with_cont)
      ::sigaction(handled_signal(i), &g_previous[i], nullptr);
  }
}

void SignalForwarding::forward_to(pid_t target, pid_t checkpoint_target) noexcept {
  g_target = target;
  g_checkpoint_target = checkpoint_target;
}

sigset_t SignalForwarding::block() noexcept {
  sigset_t job;
  sigemptyset(&job);
  for (const JobSignal& s : kJobSignals) sigaddset(&job, s.number);
  sigset_t previous;
  ::sigprocmask(SIG_BLOCK, &job, &previous);
  return previous;
}

void SignalForwarding::start_forwarding(pid_t target, pid_t checkpoint_target,
                                        const sigset_t& mask) noexcept {
  // While blocked no handler runs: this is the last signal from before the child existed.
  const int before = g_last_signal;
  forward_to(target, checkpoint_target);
  if (before != 0) ::kill(target_of(before), before);
  unblock(mask);
}

void SignalForwarding::unblock(const sigset_t& mask) noexcept {
  ::sigprocmask(SIG_SETMASK, &mask, nullptr);
}

int SignalForwarding::last_signal() const noexcept { return g_last_signal; }

bool SignalForwarding::stopping() const noexcept { return g_stopping != 0; }

void SignalForwarding::reset_in_child(const sigset_t* mask) noexcept {
  for (const JobSignal& s : kJobSignals) ::signal(s.number, SIG_DFL);
  if (mask != nullptr) ::sigprocmask(SIG_SETMASK, mask, nullptr);
}

}  // namespace dtrain
