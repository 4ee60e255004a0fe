// How a thread waits for bytes another process writes into shared memory: it polls, with a pause
// instruction between polls, and yields its core only now and then, so that a message that comes
// at once is seen without a system call (as Open MPI's shared-memory transport sees it), while a
// peer that shares the core still gets it. Used by the waiter of a message within a node
// (point_to_point/mailbox.hpp's rings) and by the shared-memory allreduce.
#pragma once

#include <chrono>

namespace dtrain::runtime {

struct Pending;
class Progress;

// One pause between two polls of memory another core writes: it lets that core's store arrive
// without this one flooding the memory system, and a sibling hyper-thread run meanwhile.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// The waiter of `p` moves its bytes itself (`progress`, engine.hpp) until it completes or for a
// bounded spin (spin_wait.cpp says how long, and when it yields); returns whether it completed.
// The caller then sleeps on p's condition variable: nothing spins for ever. Engine::wait spins so
// even on one core (its spin_ 0): this waiter waits for no thread of its process, only for a
// peer in another.
bool spin_on(Pending& p, Progress& progress);

// How long an engine's waiting caller polls before it sleeps, and its progress thread for the
// next collective (engine.cpp): most small collectives finish within 100 us, and a futex wake-up
// on each side costs more than they do. None where the process may run on one CPU only (a
// launcher bound each rank to a core): there the poller only takes time from the thread it waits
// for. (Not polling where a node's ranks outnumber its CPUs was tried and not kept: 16 KiB
// allreduces on 4 ranks of 2 cores took 1.5 x as long, docs/benchmarks.md.)
std::chrono::microseconds engine_spin();

}  // namespace dtrain::runtime
