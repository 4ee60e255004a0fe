// What a Context owns. Internal to libdtrain.
#pragma once

#include <memory>
#include <optional>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/store.hpp"
#include "comm/engine.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

// Members are destroyed in reverse order: the device communicator (NCCL), the Comm handle, the
// store, then the engine with its communicator (MPI_Finalize), then the bootstrap session
// (PMIx_Finalize). Open MPI holds its own reference on the PMIx library; releasing ours last keeps
// PMIx up for as long as MPI may use it.
struct ContextState {
  Settings settings;  // parsed once by init()
  // std::uncaught_exceptions() in init(): a Context destroyed with more is destroyed by an
  // exception propagating through it (~Context then aborts instead of finalizing).
  int uncaught_at_init = 0;
  std::unique_ptr<BootstrapSession> session;
  WorldInfo world;
  std::unique_ptr<Engine> engine;         // owns the communicator
  std::shared_ptr<Store> store;           // the job's rendezvous store (NCCL ids, TCP addresses)
  std::unique_ptr<Store> user_store;      // `store` under the prefix "user": Context::store_*
  std::optional<Comm> comm;               // the public handle on `engine`
  std::unique_ptr<Engine> device_engine;  // NCCL, created by the first device_comm()
  std::optional<Comm> device_comm;
};

}  // namespace dtrain::runtime
