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

// The number of ranks on this process's node (the Context's local_size), set by init() before
// its engine is made, weighed against the CPUs this process may run on (its affinity then).
void set_node_ranks(int ranks);
// Whether the node's ranks outnumber the CPUs this process may run on. (The waiter of a message
// within a node, spin_on, spins even so: it sees a shared core and yields between its polls.)
bool node_oversubscribed();
// How long an engine's waiting caller polls before it sleeps, and its progress thread for the
// next collective (engine.cpp): most small collectives finish within 100 us, and a futex wake-up
// on each side costs more than they do. None where the process may run on one CPU only (a
// launcher bound each rank to a core) or the node's ranks outnumber the CPUs it may run on (an
// oversubscribed node; emulated nodes on one machine): there a poller only takes the core from the
// rank it waits for (1,024 emulated ranks on 2 cores: groups made and their barriers 15-20 %
// faster without it, docs/benchmarks.md).
std::chrono::microseconds engine_spin();

}  // namespace dtrain::runtime
