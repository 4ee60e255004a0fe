// Ctrl-C during a blocking collective: the waiting thread runs Python's signal handlers about
// every 100 ms (dtrain/interrupt.hpp), so a KeyboardInterrupt ends the wait at once instead of
// when the peers arrive (or at DTRAIN_TIMEOUT). The communicator is unusable afterwards.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "buffers.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::python {

// Installs the check on `comm`. Needs the GIL.
void install_interrupt_check(Comm& comm);

// After a collective failed while it may still be inside the backend (interrupted, timed out, a
// peer lost), its buffers stay held for good: the backend may write into them later, so their
// memory must never be freed. Argument errors (Error kInvalid), raised before anything started,
// release them as usual. Call from a catch block; rethrows nothing.
void keep_if_abandoned(std::vector<std::unique_ptr<Buffer>>& held);

}  // namespace dtrain::python
