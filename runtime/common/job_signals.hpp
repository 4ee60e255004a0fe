// The signals a job is sent to stop it or to have it checkpoint, and that every process between
// the scheduler and the ranks passes on (`dtrain supervise`, `dtrain run-rank`'s logger): one list,
// so that a signal the spec accepts (`checkpoint.signal`) or a Preemption watches
// (DTRAIN_PREEMPT_SIGNALS) is never swallowed on the way. XCPU and URG are the checkpoint warnings
// of schedulers that send them (LSF's and PBS's `-l signal` setups); QUIT is a user's stop.
#pragma once

#include <signal.h>

#include <array>
#include <string_view>

namespace dtrain {

struct JobSignal {
  std::string_view name;  // without "SIG", as the spec and DTRAIN_PREEMPT_SIGNALS write it
  int number;
  bool stops;  // the sender is ending the job (it will follow with SIGKILL), not asking for a
               // checkpoint
};

inline constexpr std::array<JobSignal, 8> kJobSignals = {{{"USR1", SIGUSR1, false},
                                                          {"USR2", SIGUSR2, false},
                                                          {"TERM", SIGTERM, true},
                                                          {"INT", SIGINT, true},
                                                          {"HUP", SIGHUP, true},
                                                          {"QUIT", SIGQUIT, true},
                                                          {"XCPU", SIGXCPU, false},
                                                          {"URG", SIGURG, false}}};

}  // namespace dtrain
