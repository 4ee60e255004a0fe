// The TCP host communicator (see tcp_communicator.cpp).
#pragma once

#include <chrono>
#include <memory>

#include "bootstrap/store.hpp"
#include "comm/communicator.hpp"

namespace dtrain::runtime {

// Connects every pair of ranks through addresses published in `store` (collective: every rank
// calls it). Throws Error (kComm/kTimeout) naming the peer that could not be reached.
std::unique_ptr<Communicator> make_tcp_communicator(Store& store, int rank, int size,
                                                    std::chrono::milliseconds timeout);

}  // namespace dtrain::runtime
