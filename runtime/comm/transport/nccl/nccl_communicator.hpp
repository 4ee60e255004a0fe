// The NCCL backend (device memory), built when DTRAIN_HAVE_NCCL. See nccl_communicator.cpp.
#pragma once

#include <memory>

#include "bootstrap/store.hpp"
#include "comm/communicator.hpp"
#include "timeout.hpp"

namespace dtrain::runtime {

// Collective over every rank: rank 0 creates the NCCL unique id and publishes it through `store`
// (init() gives it the job's store under the prefix "nccl"; no MPI involved); every rank then joins
// on CUDA device local_rank % device count. NCCL and the CUDA runtime are loaded on the first call
// (nccl_library.hpp). Throws Error (kInvalid) when this build has no NCCL, a library cannot be
// loaded or no CUDA device is visible, naming the cause. `timeout`: the rendezvous' and every
// collective's deadline, and where it came from (for the errors).
std::unique_ptr<Communicator> make_nccl_communicator(Store& store, const WorldInfo& world,
                                                     Timeout timeout);

}  // namespace dtrain::runtime
