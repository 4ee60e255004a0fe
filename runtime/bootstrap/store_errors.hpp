// The messages every store uses, so they read the same whichever method is behind the store.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

// A wait() that timed out, with the parts of its message, so that a PrefixStore can say it again
// with the keys as its caller named them. Callers outside the stores catch it as Error.
class StoreTimeout : public Error {
 public:
  StoreTimeout(std::string_view method, std::vector<std::string> missing,
               std::chrono::milliseconds timeout)
      : Error(Code::kTimeout, message(method, missing, timeout)),
        method_(method),
        missing_(std::move(missing)),
        timeout_(timeout) {}
  const std::string& method() const { return method_; }
  const std::vector<std::string>& missing() const { return missing_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  static std::string message(std::string_view method, const std::vector<std::string>& missing,
                             std::chrono::milliseconds timeout) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", static_cast<double>(timeout.count()) / 1000.0);
    std::string keys;
    for (const auto& k : missing) keys += (keys.empty() ? "\"" : ", \"") + k + "\"";
    return "dtrain: store: " + std::string(method) + ": wait: keys " + keys + " not set within " +
           secs +
           " s (DTRAIN_TIMEOUT); expected every rank to publish them (a rank that never started "
           "or died?)";
  }

  std::string method_;
  std::vector<std::string> missing_;
  std::chrono::milliseconds timeout_;
};

[[noreturn]] inline void throw_store_timeout(std::string_view method,
                                             std::vector<std::string> missing,
                                             std::chrono::milliseconds timeout) {
  throw StoreTimeout(method, std::move(missing), timeout);
}

}  // namespace dtrain::runtime
