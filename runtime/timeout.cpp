#include "timeout.hpp"

#include <cstdio>

namespace dtrain::runtime {

std::string seconds_text(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

std::string timeout_text(const Timeout& timeout) {
  return seconds_text(timeout.after) + (timeout.source == TimeoutSource::kEnvironment
                                            ? " s (DTRAIN_TIMEOUT)"
                                            : " s (the timeout given for this group, not "
                                              "DTRAIN_TIMEOUT)");
}

}  // namespace dtrain::runtime
