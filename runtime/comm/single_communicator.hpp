// The one-rank backend (see single_communicator.cpp).
#pragma once

#include <memory>

#include "comm/communicator.hpp"

namespace dtrain::runtime {

// One rank: an allreduce copies `in` to `out`, a broadcast and a barrier do nothing.
std::unique_ptr<Communicator> make_single_communicator();

}  // namespace dtrain::runtime
