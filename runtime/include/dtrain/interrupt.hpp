// Interrupting a blocking wait, for language bindings: a Python user's Ctrl-C must not wait for
// peers that may never arrive. libdtrain cannot cancel a collective (an MPI call cannot be
// interrupted), so an interrupted wait is abandoned and the communicator is given up, as after a
// timeout. Separate from dtrain.hpp because C++ programs have no use for it: their signals do
// not wait for a thread to take a lock.
#pragma once

#include <functional>

#include "dtrain/dtrain.hpp"

namespace dtrain {

// While a caller waits for a collective of `comm` (a blocking collective, Work::wait,
// FusedAllreduce::run), the waiting thread calls `check` about every 100 ms. An exception thrown
// by `check` abandons the wait and propagates to the caller; the communicator is unusable from
// then on (every later collective throws Error kComm saying so), and the abandoned collective's
// buffers must stay allocated, since the backend may still write into them. Set it before the
// first collective; an empty function removes it.
DTRAIN_API void set_interrupt_check(Comm& comm, std::function<void()> check);

}  // namespace dtrain
