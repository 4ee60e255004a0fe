// Waiting for a thread without the GIL. Python runs an object's C++ destructor with the GIL held
// (its last reference dropped: destroy_process_group, `del`, the garbage collector), and a wait
// there for a thread that itself needs the GIL never ends: the process group's completion thread
// takes it to drop the last reference to a tensor Python made and to run a future's Python
// callbacks (destroy_process_group hung about 1 run in 4; the torch_tcp_destroy_loop_* tests).
// Shared by dtrain._dtrain and dtrain._torch, so that every wait of theirs on a backend thread
// releases the GIL the same way.
#pragma once

#include <functional>

namespace dtrain::python {

// Runs `wait` with the GIL released when the calling thread holds it, and as it is otherwise (a
// thread without it, C++ callers, or the interpreter shutting down, when no other thread can take
// the GIL and torch drops tensors without it).
void without_gil(const std::function<void()>& wait);

}  // namespace dtrain::python
