// Finding this process's place in the job. One function per method; select.cpp picks one. A
// bootstrap only learns who is where: moving data is the communicators' job.
#pragma once

#include <memory>
#include <string>

#include "context_state.hpp"

namespace dtrain::runtime {

struct Bootstrapped {
  WorldInfo world;
  std::unique_ptr<BootstrapSession> session;  // null when the method keeps no state
};

// True when a PMIx server started this process: Open MPI's mpirun and srun --mpi=pmix both
// export PMIX_NAMESPACE and PMIX_RANK to their tasks.
bool pmix_launched();

// Throws Error (kComm) naming PMIx and the failing call.
Bootstrapped bootstrap_pmix();

Bootstrapped bootstrap_single();

// gethostname(), "" if it fails.
std::string local_hostname();

// `forced` is DTRAIN_BOOTSTRAP (null or empty: choose automatically). Throws Error (kInvalid)
// for an unknown method or a forced one that cannot work here.
Bootstrapped bootstrap_select(const char* forced);

}  // namespace dtrain::runtime
