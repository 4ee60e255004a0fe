#include "shared_context.hpp"

#include <mutex>

namespace dtrain::python {
namespace {

// Weak: the Context ends when the last of its holders (Python objects, process groups and their
// subgroups) lets it go, and a later dtrain.init() then makes a new one.
std::mutex live_mutex;
std::weak_ptr<Context> live;

}  // namespace

SharedContext live_context() {
  std::lock_guard lock(live_mutex);
  return live.lock();
}

SharedContext live_or_make(const std::function<SharedContext()>& make) {
  std::lock_guard lock(live_mutex);  // two threads' dtrain.init() make one Context
  SharedContext c = live.lock();
  if (c) return c;
  c = make();
  live = c;
  return c;
}

void note_live(const SharedContext& c) {
  std::lock_guard lock(live_mutex);
  live = c;
}

}  // namespace dtrain::python
