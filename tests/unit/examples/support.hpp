// What the example's unit tests share.
#pragma once

#include <string>

#include "idx.hpp"  // DataError

namespace fmnist::testing {

// The message of the DataError `f` throws, or "(no error)".
template <typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace fmnist::testing
