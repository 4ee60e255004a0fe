// The TCP host communicator (see tcp_communicator.cpp).
#pragma once

#include <memory>

#include "bootstrap/store.hpp"
#include "comm/communicator.hpp"
#include "settings.hpp"

namespace dtrain::runtime {

// Connects every pair of ranks through addresses published in `store` (collective: every rank
// calls it; init() gives it the job's store under the prefix "tcp"), within settings.timeout;
// settings.shm allows the shared-memory allreduce. Throws Error (kComm/kTimeout) naming the peer
// that could not be reached.
std::unique_ptr<Communicator> make_tcp_communicator(Store& store, int rank, int size,
                                                    const Settings& settings);

}  // namespace dtrain::runtime
