// Finding this process's place in the job, and the store its ranks share. One function per
// method; select.cpp picks one. A bootstrap only learns who is where and opens the store: moving
// data is the communicators' job.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "bootstrap/store.hpp"
#include "dtrain/dtrain.hpp"
#include "launch/launcher_env.hpp"
#include "settings.hpp"

namespace dtrain::runtime {

// A bootstrap method's live state (a PMIx session), released when the Context goes.
class BootstrapSession {
 public:
  BootstrapSession() = default;
  BootstrapSession(const BootstrapSession&) = delete;
  BootstrapSession& operator=(const BootstrapSession&) = delete;
  virtual ~BootstrapSession() = default;
};

struct Bootstrapped {
  WorldInfo world;
  std::unique_ptr<BootstrapSession> session;  // null when the method keeps no state
  // Null for the MPI bootstrap: its store runs over the communicator, built after it.
  std::shared_ptr<Store> store;
  bool owns_mpi = false;  // the MPI bootstrap started MPI: the communicator finalizes it
};

// The launchers' variables come in `env` (launch::current_environment(): libdtrain reads the
// environment only in settings.cpp and through runtime/launch).
// True when a PMIx server started this process: Open MPI's mpirun and srun --mpi=pmix both
// export PMIX_NAMESPACE and PMIX_RANK to their tasks.
bool pmix_launched(const launch::Environment& env);
// True when an MPI launcher without PMIx started it (MPICH/Hydra PMI_*, Open MPI OMPI_COMM_WORLD_*,
// MVAPICH MV2_*).
bool mpi_launched(const launch::Environment& env);
// True when torchrun-style variables are all set: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE;
// false when none of them (nor LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK) is. Throws Error
// (kInvalid) naming the missing ones when only some are set.
bool env_launched(const launch::Environment& env);

// Each throws Error naming its method and the failing call or variable.
Bootstrapped bootstrap_pmix();
Bootstrapped bootstrap_mpi();
// `timeout`: how long the TCP store's clients try to reach rank 0.
Bootstrapped bootstrap_env(const launch::Environment& env, std::chrono::milliseconds timeout);
Bootstrapped bootstrap_single();
// From the caller's rank, size and store (init(ExternalBootstrap)). Throws Error (kInvalid) naming
// a bad rank or size, or a missing store for several ranks.
Bootstrapped bootstrap_external(const ExternalBootstrap& given);

// settings.bootstrap (DTRAIN_BOOTSTRAP) forces a method; empty: choose automatically, PMIx > MPI >
// env/TCP > single. Throws Error (kInvalid) for a forced method that cannot work here.
Bootstrapped bootstrap_select(const Settings& settings);

}  // namespace dtrain::runtime
