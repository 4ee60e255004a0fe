// The TCP host communicator (see tcp_communicator.cpp).
#pragma once

#include <memory>
#include <string>

#include "bootstrap/store.hpp"
#include "comm/communicator.hpp"
#include "settings.hpp"

namespace dtrain::runtime {

// Connects every pair of ranks through addresses published in `store` (collective: every rank
// calls it; init() gives it the job's store under the prefix "tcp"), within settings.timeout;
// settings.shm allows the shared-memory allreduce, settings.algo chooses the hierarchical one
// across nodes. Throws Error (kComm/kTimeout) naming the peer that could not be reached.
// `node_name`: the node this rank announces ("": this host's name), so that tests can place
// ranks of one process on several nodes.
std::unique_ptr<Communicator> make_tcp_communicator(Store& store, int rank, int size,
                                                    const Settings& settings,
                                                    const std::string& node_name = "");

}  // namespace dtrain::runtime
