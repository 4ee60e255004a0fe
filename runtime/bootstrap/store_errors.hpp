// The messages every store uses, so they read the same whichever method is behind the store.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

[[noreturn]] inline void throw_store_timeout(std::string_view method,
                                             const std::vector<std::string>& missing,
                                             std::chrono::milliseconds timeout) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%g", static_cast<double>(timeout.count()) / 1000.0);
  std::string keys;
  for (const auto& k : missing) keys += (keys.empty() ? "\"" : ", \"") + k + "\"";
  throw Error(Error::Code::kTimeout,
              "dtrain: store: " + std::string(method) + ": wait: keys " + keys +
                  " not set within " + secs +
                  " s (DTRAIN_TIMEOUT); expected every rank to publish them (a rank that never "
                  "started or died?)");
}

}  // namespace dtrain::runtime
