// Finding this process's place in the job. Each method is one function; select.cpp picks one.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "context_state.hpp"

namespace dtrain::detail {

struct Bootstrapped {
  WorldInfo world;
  std::unique_ptr<BootstrapSession> session;
};

// True when a PMIx server started this process (mpirun of Open MPI, srun --mpi=pmix).
bool pmix_launched();

// Throws Error (kComm) naming PMIx and the failing call.
Bootstrapped bootstrap_pmix();

Bootstrapped bootstrap_single();

// DTRAIN_BOOTSTRAP or automatic choice; throws Error for an unknown method.
Bootstrapped bootstrap_select(const char* forced_method);

}  // namespace dtrain::detail
