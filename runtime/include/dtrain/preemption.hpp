// dtrain::Preemption: stop cleanly when the scheduler says the end is near. It catches the
// signals a scheduler sends before it kills a job (Slurm's `--signal=USR1@120`, `scancel
// --signal`, SIGTERM at the time limit or on preemption) and turns them into one decision that
// every rank takes at the same step: should_stop() is collective, a one-integer allreduce, so a
// signal that reached only one rank stops all of them together.
//
//   dtrain::Preemption preempt(ctx);
//   for (; step < steps; ++step) {
//     train_one_step();
//     if (preempt.should_stop()) {
//       ckpt.save(step, state);
//       return dtrain::kExitRequeue;   // the job script requeues the job (docs/runtime-api.md)
//     }
//   }
//
// One Preemption per process at a time: the signal handlers are process-wide. Destroying it
// restores the handlers that were there before.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace dtrain {

namespace runtime {
struct SavedHandlers;
}

// The exit status that asks dtrain's job scripts to requeue the job after a checkpoint (Slurm:
// `scontrol requeue`, PBS: `qrerun`). The CLI's job scripts test for this constant itself.
inline constexpr int kExitRequeue = 85;

class DTRAIN_API Preemption {
 public:
  // Watches DTRAIN_PREEMPT_SIGNALS (comma-separated names such as "USR1,TERM", with or without
  // "SIG") when set, else SIGUSR1 and SIGTERM. init() reads the variable, and refuses a bad signal
  // name there. Throws Error (kInvalid) when another Preemption is alive.
  explicit Preemption(Context& ctx);
  // Watches exactly `signals` (signal numbers; SIGKILL and SIGSTOP cannot be caught).
  Preemption(Context& ctx, std::vector<int> signals);
  ~Preemption();
  Preemption(const Preemption&) = delete;
  Preemption& operator=(const Preemption&) = delete;

  // Collective: true on every rank once any rank has received one of the signals, checked at
  // the same call on every rank. Call it once per step, at the same place on every rank.
  bool should_stop();
  // Local, no communication: whether this process has received one of the signals.
  bool requested() const;
  // The first signal this process received, 0 if none.
  int signal_received() const;
  const std::vector<int>& signals() const { return signals_; }

 private:
  Context* ctx_;
  std::vector<int> signals_;
  std::unique_ptr<runtime::SavedHandlers> previous_;  // restored on destruction
};

// "USR1", "SIGUSR1", "TERM", ... -> the signal number. Throws Error (kInvalid) naming the value
// and the accepted names.
DTRAIN_API int signal_from_name(const std::string& name);

}  // namespace dtrain
