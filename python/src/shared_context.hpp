// The process's one Context, shared by dtrain.init() (dtrain._dtrain) and the torch backend's
// default process group (dtrain._torch): whichever starts first makes it, the other runs on it
// (docs/torch.md, "One Context per process"). Two Contexts were two rendezvous, two sets of
// connections and two sequences of collectives: the Meter and the hang watch saw one of them, and
// after a failure the healthy one's teardown waited a second DTRAIN_TIMEOUT for the lost peer.
#pragma once

#include <functional>
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

// The process's live Context, null when none is: tracked here, beside the holder, rather than by
// Python weak references to the object dtrain.init() returned, because the Context outlives that
// object wherever a process group (or its subgroups) holds it, and a second Context made then was
// a second sequence of collectives whose ends met in a different order on each rank (the finalize
// deadlock of a re-initialized default group, docs/torch.md). shared_context.cpp; in
// dtrain._dtrain only (dtrain._torch's groups are noted through Python: dtrain._made_by).
SharedContext live_context();
// The live Context, else `make()`'s (called with no GIL held: it bootstraps), noted as live.
SharedContext live_or_make(const std::function<SharedContext()>& make);
// `c` (a Context a torch process group made) is the process's live one.
void note_live(const SharedContext& c);

}  // namespace dtrain::python
