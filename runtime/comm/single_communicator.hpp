// The one-rank backend (see single_communicator.cpp).
#pragma once

#include <chrono>
#include <memory>

#include "comm/communicator.hpp"

namespace dtrain::runtime {

// One rank: an allreduce copies `in` to `out`, a broadcast and a barrier do nothing; a message
// to itself is copied into its receive. `timeout`: a receive's deadline (DTRAIN_TIMEOUT).
std::unique_ptr<Communicator> make_single_communicator(
    std::chrono::milliseconds timeout = std::chrono::minutes(5));

}  // namespace dtrain::runtime
