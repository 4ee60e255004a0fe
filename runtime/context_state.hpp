// What a Context owns, in the order it must be torn down: the communicator (MPI_Finalize) before
// the bootstrap session (PMIx_Finalize). Internal to libdtrain.
#pragma once

#include <memory>
#include <string>

#include "dtrain/dtrain.hpp"

namespace dtrain::detail {

// A bootstrap method's live state (a PMIx session); destroyed last.
class BootstrapSession {
 public:
  virtual ~BootstrapSession() = default;
};

struct ContextState {
  std::unique_ptr<BootstrapSession> session;  // declared first: destroyed last
  WorldInfo world;
  std::string run_dir;
  std::unique_ptr<Communicator> comm;
};

}  // namespace dtrain::detail
