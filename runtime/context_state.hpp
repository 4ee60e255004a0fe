// What a Context owns. Internal to libdtrain.
#pragma once

#include <memory>
#include <optional>

#include "comm/communicator.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

// A bootstrap method's live state (a PMIx session), released when the Context goes.
class BootstrapSession {
 public:
  BootstrapSession() = default;
  BootstrapSession(const BootstrapSession&) = delete;
  BootstrapSession& operator=(const BootstrapSession&) = delete;
  virtual ~BootstrapSession() = default;
};

// Members are destroyed in reverse order: the Comm handle, then the communicator (MPI_Finalize),
// then the bootstrap session (PMIx_Finalize). Open MPI holds its own reference on the PMIx
// library; releasing ours last keeps PMIx up for as long as MPI may use it.
struct ContextState {
  std::unique_ptr<BootstrapSession> session;
  WorldInfo world;
  std::unique_ptr<Communicator> communicator;
  std::optional<Comm> comm;  // the public handle on `communicator`
};

}  // namespace dtrain::runtime
