// Signal handlers can reach nothing but globals: the received signal lives in one lock-free
// atomic, and only one Preemption may own the handlers at a time.
#include "dtrain/preemption.hpp"

#include <signal.h>

#include <atomic>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "comm/engine.hpp"
#include "preemption/signals.hpp"

namespace dtrain {

namespace runtime {
// The sigaction each watched signal had before.
struct SavedHandlers {
  std::vector<struct sigaction> actions;
};
}  // namespace runtime

namespace {

std::atomic<int> g_received{0};
std::atomic<bool> g_active{false};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free int");

extern "C" void on_signal(int sig) {
  int none = 0;
  g_received.compare_exchange_strong(none, sig);
}

}  // namespace

int signal_from_name(const std::string& name) {
  if (const std::optional<int> number = runtime::signal_number(name)) return *number;
  throw Error(Error::Code::kInvalid, "dtrain: preemption: signal; expected one of " +
                                         runtime::accepted_signal_names() + ", got \"" + name +
                                         "\"");
}

Preemption::Preemption(Context& ctx)
    : Preemption(ctx, ctx.comm().engine().settings().preempt_signals) {}

Preemption::Preemption(Context& ctx, std::vector<int> signals)
    : ctx_(&ctx), signals_(std::move(signals)) {
  if (signals_.empty()) {
    throw Error(Error::Code::kInvalid,
                "dtrain: preemption: signals; expected at least one signal, got none");
  }
  for (int sig : signals_) {
    if (sig <= 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP) {
      throw Error(Error::Code::kInvalid, "dtrain: preemption: signal " + std::to_string(sig) +
                                             "; expected a catchable signal such as SIGUSR1");
    }
  }
  bool expected = false;
  if (!g_active.compare_exchange_strong(expected, true)) {
    throw Error(Error::Code::kInvalid,
                "dtrain: preemption: another Preemption is alive in this process; expected one "
                "at a time (the signal handlers are process-wide)");
  }
  g_received.store(0);
  previous_ = std::make_unique<runtime::SavedHandlers>();
  previous_->actions.resize(signals_.size());
  for (std::size_t i = 0; i < signals_.size(); ++i) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    // SA_RESTART: a signal in the middle of a read or a collective's poll does not fail it.
    sa.sa_flags = SA_RESTART;
    sigaction(signals_[i], &sa, &previous_->actions[i]);
  }
}

Preemption::~Preemption() {
  for (std::size_t i = 0; i < signals_.size(); ++i) {
    sigaction(signals_[i], &previous_->actions[i], nullptr);
  }
  g_active.store(false);
}

bool Preemption::requested() const { return g_received.load() != 0; }

int Preemption::signal_received() const { return g_received.load(); }

bool Preemption::should_stop() {
  std::int32_t flag = requested() ? 1 : 0;
  ctx_->comm().allreduce(std::span<std::int32_t>(&flag, 1), ReduceOp::kMax);
  return flag != 0;
}

}  // namespace dtrain
