// The process's one Context, shared by dtrain.init() (dtrain._dtrain) and the torch backend's
// default process group (dtrain._torch): whichever starts first makes it, the other runs on it
// (docs/torch.md, "One Context per process"). Two Contexts were two rendezvous, two sets of
// connections and two sequences of collectives: the Meter and the hang watch saw one of them, and
// after a failure the healthy one's teardown waited a second DTRAIN_TIMEOUT for the lost peer.
#pragma once

#include <memory>
#include <utility>

#include "dtrain/dtrain.hpp"
#include "gil.hpp"

namespace dtrain::python {

using SharedContext = std::shared_ptr<Context>;

// `ctx`, held so that its end runs without the GIL whoever drops the last reference (Python, or
// the process group's destructor): the end waits for the other ranks (finalizing is collective)
// and joins libdtrain's progress thread, neither of which needs the GIL, and holding it there
// would stop this process's other Python threads until the slowest rank is done.
inline SharedContext share(Context ctx) {
  return SharedContext(new Context(std::move(ctx)),
                       [](Context* c) { without_gil([c] { delete c; }); });
}

}  // namespace dtrain::python
