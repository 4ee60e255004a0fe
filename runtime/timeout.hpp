// A communicator's deadline and where it came from: DTRAIN_TIMEOUT, or the caller (torch's
// init_process_group(timeout=...) through ExternalBootstrap, new_group(timeout=...) through
// Comm::subgroup). Carried with the duration so that a timeout error names the setting that set
// it: a user who gave a group 1 s must not be sent to DTRAIN_TIMEOUT.
#pragma once

#include <chrono>
#include <string>

namespace dtrain::runtime {

enum class TimeoutSource {
  kEnvironment,  // DTRAIN_TIMEOUT (or its default)
  kCaller,       // given for this communicator by the code that made it
};

struct Timeout {
  std::chrono::milliseconds after;
  TimeoutSource source = TimeoutSource::kEnvironment;
};

// "0.3": seconds as the messages print them.
std::string seconds_text(std::chrono::milliseconds ms);

// The deadline as errors state it: "5 s (DTRAIN_TIMEOUT)", or "1 s (the timeout given for this
// group, not DTRAIN_TIMEOUT)". torch's tests look for " timeout " in a timeout's text.
std::string timeout_text(const Timeout& timeout);

}  // namespace dtrain::runtime
