#include "comm/spin_wait.hpp"

#include <sched.h>

#include <chrono>
#include <optional>

#include "comm/engine.hpp"

namespace dtrain::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// How long a waiter polls before it sleeps, renewed while bytes move: most messages within a node
// come well within it, and a sleep costs a wake-up through the mailbox's thread and a futex (two
// thread switches, tens of µs on a loaded VM), far more than a small message.
constexpr auto kSpin = std::chrono::microseconds(100);

// How long a waiter polls without bytes moving while a message is part-way through a ring
// (Progress::mid_message), before it sleeps. Its peer is copying the other end, so a pause is
// its thread taken off its core for a while (by the VM's host, or the peer's mailbox thread), not
// the peer's program. A sleeper's bytes then move through the mailboxes' threads, each lap of the
// 64 KiB ring a wake-up on each side: 64 MiB one way took 22-71 ms with the 100 us spin on the
// 2-core VM of docs/benchmarks.md, 13-18 ms with a 20 ms one (memcpy: 12-14 ms).
constexpr auto kMidMessageSpin = std::chrono::milliseconds(20);

// How long a waiter polls without a system call before it yields its core once (and again after
// as long). Why 5 µs: a small message's round trip between two cores takes about 1 µs (Open MPI's
// 8 B ping-pong: 0.4-0.5 µs one way on the 2-core VM of docs/benchmarks.md), so a reply that comes
// at once is seen by a poll; a yield is a system call, 1.1-1.5 µs there, and yielding between all
// polls makes each poll that long (8 B took 3.3-4 µs one way so). A peer that shares this core
// waits at most this long for it, and not even that once the waiter has seen the core shared
// (below).
constexpr auto kPollBetweenYields = std::chrono::microseconds(5);

// A yield that took longer than this ran another thread on this core meanwhile (measured on that
// VM: a bare yield 1.1-1.5 µs, a yield to another thread and back 3.4-3.6 µs): the core is shared,
// with the peer this waiter waits for most likely, so from then on the thread yields between all
// polls until a yield comes back at once again.
constexpr auto kYieldRanAnother = std::chrono::nanoseconds(2500);

// The CPUs this process may run on; 0 when the system does not say.
int usable_cpus() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  return sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
}

}  // namespace

std::chrono::microseconds engine_spin() {
  const int usable = usable_cpus();
  return usable > 0 && usable < 2 ? std::chrono::microseconds(0) : kSpin;
}

bool spin_on(Pending& p, Progress& progress) {
  // Per thread: a thread runs on one core at a time, and a rank's caller keeps its core.
  thread_local bool core_shared = false;
  // The clock is read once every kPollsPerClock polls, or when bytes moved, and first only then: a
  // read costs about as much as a poll on a VM (perf: 15 % of a ping-pong's samples were in it),
  // the bounds it checks are µs long, and most messages within a node complete before it.
  constexpr unsigned kPollsPerClock = 8;
  unsigned polls = 0;
  std::optional<Clock::time_point> spin_until;
  Clock::time_point yield_at;
  progress.begin();
  while (!p.done.load(std::memory_order_acquire)) {
    const bool moved = progress.step();
    if (p.done.load(std::memory_order_acquire)) break;
    if (!moved && ++polls % kPollsPerClock != 0) {
      cpu_relax();
      continue;
    }
    const auto now = Clock::now();
    if (!spin_until) yield_at = core_shared ? now : now + kPollBetweenYields;
    if (moved || !spin_until) {
      spin_until =
          now + (progress.mid_message()
                     ? std::chrono::duration_cast<std::chrono::microseconds>(kMidMessageSpin)
                     : kSpin);
    }
    if (now >= *spin_until) break;
    if (now < yield_at) {
      cpu_relax();
      continue;
    }
    sched_yield();
    const auto after = Clock::now();
    core_shared = after - now > kYieldRanAnother;
    yield_at = core_shared ? after : after + kPollBetweenYields;
  }
  const bool done = p.done.load(std::memory_order_acquire);
  progress.end(done);
  return done;
}

}  // namespace dtrain::runtime
