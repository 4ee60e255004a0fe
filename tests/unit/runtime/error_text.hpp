// What the runtime's tests read of a failed call: the text of the dtrain::Error it threw, or
// "(no error)" when it returned.
#pragma once

#include <functional>
#include <string>

#include "dtrain/dtrain.hpp"

namespace dtrain::test {

inline std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const dtrain::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace dtrain::test
