// The one way libdtrain starts a thread: named, so that `top -H`, `ps -L`, gdb, py-spy and perf
// show what each thread of a rank is (the engine's progress thread, the messages' thread, the
// lost-peer watch, the rendezvous store, the records' writer) rather than copies of the
// program's name: a rank that hangs or burns a core is then read off its thread list.
#pragma once

#include <pthread.h>

#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace dtrain {

// Linux keeps 15 characters of a name. Best effort: a name helps a reader, never fails a rank.
inline void name_this_thread(std::string_view name) {
  const std::string kept(name.substr(0, 15));
  (void)pthread_setname_np(pthread_self(), kept.c_str());
}

// A std::thread running `body` under `name`.
template <class Body>
std::thread named_thread(std::string_view name, Body body) {
  return std::thread([name = std::string(name), body = std::move(body)]() mutable {
    name_this_thread(name);
    body();
  });
}

}  // namespace dtrain
