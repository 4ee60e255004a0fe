// Between an Engine's progress thread and its destructor: whether the thread is inside a
// collective's body (in the backend), and what the destructor decided. Held on the heap by both,
// so that it outlives the Engine: an Engine destroyed while its thread is stuck in the backend
// leaves the thread behind (joining would hang), and should the body return after all (a peer's
// exit closes the socket it waited on) the thread must touch nothing of the Engine.
#pragma once

#include <mutex>

namespace dtrain::runtime {

class BodyGate {
 public:
  // The thread, before a body: false when the Engine closed the gate (it is joining the thread,
  // which must start nothing on the broken backend).
  bool enter();
  // The thread, after the body: false when the Engine was destroyed meanwhile (orphaned).
  bool leave();
  // The destructor, for a thread that may be stuck: true when the thread is inside a body (it is
  // orphaned: detach it); otherwise closes the gate (join it).
  bool orphan_if_inside();

 private:
  std::mutex mutex_;
  bool in_body_ = false;
  bool orphaned_ = false;
  bool closed_ = false;
};

}  // namespace dtrain::runtime
