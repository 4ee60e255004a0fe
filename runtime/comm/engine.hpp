// The engine behind dtrain::Comm: numbers every collective, runs it on the communicator's
// progress thread under the DTRAIN_TIMEOUT deadline and reports enter/exit to the metric stream.
// It also carries the Settings its Context was made with, for what is built on a Comm later
// (FusedAllreduce's bucket size, Preemption's signals), and the step its Checkpointer resumed from
// (the Meter's step numbers).
//
// Why a thread: an MPI collective cannot be interrupted, and nonblocking MPI collectives are ~35 %
// slower on large messages here (MPI_Iallreduce 3.4 GB/s vs MPI_Allreduce 5.1 GB/s at 64 MiB in
// 4 MiB pieces). So the blocking call runs on the progress thread while the caller waits with a
// deadline; when it expires the caller gets an Error naming the operation and its sequence number,
// and the communicator is abandoned (the stuck call is never joined, MPI never finalized).
// Asynchronous operations (Work) and the fusion pipeline use the same thread. A blocking
// collective whose backend waits by polling (Communicator::allreduce_polls: small MPI allreduces)
// runs on the caller's thread instead when the engine is idle, checking the deadline between polls:
// with each rank bound to one core, handing it over would cost two context switches.
//
// When the backend lists this node's ranks (Communicator::node_processes: MPI), the engine watches
// their processes (PeerWatch) and reports the first one that ends: its launcher kills this rank
// about a second later, so the report is written to stderr at once, and the running and later
// collectives fail with the same message. With the backend's peer alarm (MPI across nodes), the
// same thread passes such a loss on to the ranks that cannot see it, and reports theirs the same
// way.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "comm/body_gate.hpp"
#include "comm/communicator.hpp"
#include "comm/lost_peers/peer_watch.hpp"
#include "common/thread_name.hpp"
#include "records/live_status.hpp"
#include "settings.hpp"

namespace dtrain::runtime {

// Receives every collective's enter and exit (the Meter's heartbeats). Called on the thread that
// runs the collective; must be cheap and must not throw.
class CollectiveObserver {
 public:
  virtual ~CollectiveObserver() = default;
  // `failed` (at exit only): the collective ended with an error rather than completing.
  virtual void on_collective(std::uint64_t seq, const char* op, std::size_t bytes, bool enter,
                             bool failed) noexcept = 0;
};

// The step of the checkpoint that a Checkpointer of this Context last loaded (load_latest()), -1
// when none was: a Meter numbers its steps on from there, so that a restarted attempt does not
// number them from 0 again. Shared, so that a Meter may outlive its Context.
struct ResumedStep {
  std::atomic<std::int64_t> step{-1};
};

// A message's bytes moved by the thread that waits for it (point_to_point/mailbox.hpp: its
// shared-memory rings), so that a message within a node needs no switch to another thread.
// begin and end bracket the waiter's spin; step returns whether bytes moved (the spin goes on
// while they do); end is told whether the message completed (else the waiter goes to sleep).
// mid_message: whether a message is part-way through, its peer copying the other end at the
// same time (spin_wait.hpp: the waiter then bears a longer pause before it sleeps).
class Progress {
 public:
  virtual void begin() = 0;
  virtual bool step() = 0;
  virtual void end(bool done) = 0;
  virtual bool mid_message() const = 0;

 protected:
  ~Progress() = default;
};

// One submitted collective.
struct Pending {
  std::uint64_t seq = 0;
  const char* op = "";
  std::size_t bytes = 0;
  std::function<void()> body;
  // The body waits only by polling (Communicator::allreduce_polls): no deadline of the backend's
  // own applies, so the Engine's is the one the message states, with no grace added.
  bool polls = false;
  std::mutex mutex;
  std::condition_variable cv;
  std::atomic<bool> done{false};
  // Waiters inside cv's wait (counted under `mutex`, before they check `done` there): a finisher
  // that stores `done` and then sees none need not take `mutex` nor notify (a message within a
  // node completes while its waiter spins: Mailbox::finish skips both, docs/benchmarks.md).
  std::atomic<int> sleepers{0};
  std::exception_ptr error;
  // A point-to-point message (point_to_point/mailbox.hpp) is no collective: it never enters the
  // queue, and has a deadline of its own. Past it, the waiter calls `expire`, which fails the
  // message (naming it) unless it completed meanwhile.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::function<void()> expire;
  std::atomic<int> source{-1};  // a completed receive's sender
  // Set by the mailbox that outlives its messages' waits (its destructor completes them all).
  Progress* progress = nullptr;
};

class Engine {
 public:
  // The deadline of every collective is settings.timeout.
  Engine(std::unique_ptr<Communicator> backend, int rank, int size, Settings settings);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Communicator& backend() { return *backend_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  std::chrono::milliseconds timeout() const { return settings_.timeout; }
  const Settings& settings() const { return settings_; }

  // Queues `body` (which calls the backend) as collective `op` of `bytes`; returns at once.
  // `polls`: see Pending::polls.
  std::shared_ptr<Pending> submit(const char* op, std::size_t bytes, std::function<void()> body,
                                  bool polls = false);
  // The same, for a body that needs its collective's sequence number (the tag of its messages,
  // message_schedules.hpp).
  std::shared_ptr<Pending> submit_numbered(const char* op, std::size_t bytes,
                                           std::function<void(std::uint64_t seq)> body);
  // Waits for `p`; rethrows its error; throws Error (kTimeout) when the collective running now
  // has taken longer than the timeout.
  void wait(Pending& p);
  // True when done (rethrowing its error); never blocks.
  bool test(Pending& p);
  void run(const char* op, std::size_t bytes, std::function<void()> body, bool polls = false) {
    auto p = submit(op, bytes, std::move(body), polls);
    wait(*p);
  }
  // Runs `body` as collective `op` on the calling thread when nothing is queued or running, and
  // returns true (rethrowing its error); returns false, running nothing, when the engine is busy
  // or has no progress thread. `body` must wait only through the backend's poll(), which throws
  // the timeout error once the collective is past the deadline (Communicator::allreduce_polls).
  bool run_inline(const char* op, std::size_t bytes, const std::function<void()>& body);

  std::uint64_t next_sequence() const { return next_seq_; }
  // False for a one-rank backend: submit() then runs the body before returning.
  bool threaded() const { return threaded_; }
  void set_observer(std::shared_ptr<CollectiveObserver> observer);
  // The live status page its logger handed this rank (records/live_status.hpp): every collective's
  // enter and exit go there too. Set once, before the first collective (Context's start).
  void set_live_page(std::shared_ptr<records::LivePage> page) { live_ = std::move(page); }
  const std::shared_ptr<ResumedStep>& resumed_step() const { return resumed_step_; }
  // See dtrain::set_interrupt_check (dtrain/interrupt.hpp). Set before the first collective.
  void set_interrupt_check(std::function<void()> check) { interrupt_check_ = std::move(check); }
  // A peer's process ended (called by the PeerWatch; `told_by`: the rank whose alarm said so, -1
  // when this rank saw it): writes one line naming it, its host and what this rank was doing to
  // stderr, and fails the running and later collectives with it. Nothing once the backend says
  // peers may exit (MPI finalized) or after an earlier failure. Returns whether it reported;
  // when it does, `announce` (PeerWatch's alarm) runs first.
  bool peer_lost(const PeerProcess& peer, int told_by = -1,
                 const std::function<void()>& announce = {}) noexcept;
  // This rank is leaving the job after an error (Context::abort): writes `report` (unless empty)
  // to stderr, then tells the other ranks through the peer alarm (PeerWatch::leave; with
  // `at_exit`, PeerWatch::leave_at_exit), fails the running and later collectives with `report`,
  // and abandons the backend, so that its teardown runs nothing collective: MPI_Win_free and
  // MPI_Finalize would wait for ranks still in their training loop. A rank whose collective
  // already failed for want of a peer (a lost peer, a timeout, a closed connection) is that
  // failure's victim: it says and sends nothing (its own error names the culprit, and the others
  // heard of it). The first call only.
  void abort(const std::string& report, bool at_exit = false) noexcept;

 private:
  // Queues `p` (its body made from `numbered` with its number, when given) for the progress
  // thread, which the first one starts: a group never used costs no thread, and a rank making its
  // groups no thread start (0.7 ms of CPU each, measured: 256 groups at 1,024 emulated ranks).
  void enqueue(const std::shared_ptr<Pending>& p, std::function<void(std::uint64_t)> numbered);
  void loop(const std::shared_ptr<BodyGate>& gate);
  // How long `p` may run before the waiter throws the timeout: the timeout, plus a grace when
  // the backend gives up by itself at the deadline (its message names the peer) and `p` does not
  // just poll. With mutex_ held.
  std::chrono::milliseconds limit(const Pending* p) const;
  // Runs `p`'s body and records its end. `gate`: the progress thread's (null on a caller's
  // thread); false when the Engine was destroyed while the body ran (nothing of it may be touched).
  bool execute(Pending& p, const std::function<void()>& body, BodyGate* gate = nullptr) noexcept;
  // "allreduce #3 (4096 bytes, mpi, rank 0 of 4)" for `p`; for none, "between collectives (mpi,
  // rank 0 of 4, next #5)"; rank_text() for a group's. With mutex_ held.
  std::string where(const Pending* p) const;
  // "rank 0 of 4"; a group's engine names this rank in both numberings, as its messages' errors
  // do: "group rank 0 (world rank 2) of 2" (rank_of, message_space.hpp).
  std::string rank_text() const;
  [[noreturn]] void throw_timeout();
  // Calls interrupt_check_ (if set) for a caller waiting on `p`; when it throws, the
  // communicator is marked unusable (the collective cannot be cancelled) and the exception is
  // rethrown. Without mutex_ held.
  void check_interrupt(const Pending& p);
  // For a collective waited on after the failure: the failure's own message if it is the one
  // that was running, else "communicator unusable after an earlier failure". With mutex_ held.
  [[noreturn]] void throw_broken(std::optional<std::uint64_t> seq = std::nullopt) const;

  std::unique_ptr<Communicator> backend_;
  int rank_;
  int size_;
  Settings settings_;
  bool threaded_;
  std::chrono::microseconds spin_;  // how long a waiting side polls before sleeping
  std::uint64_t next_seq_ = 0;

  std::mutex mutex_;  // guards queue_, stop_, running_*, broken_, interrupted_
  std::condition_variable work_;
  std::deque<std::shared_ptr<Pending>> queue_;
  std::atomic<int> queued_{0};  // queue_.size(), readable without the lock
  bool stop_ = false;
  std::shared_ptr<Pending> running_;
  std::chrono::steady_clock::time_point running_since_;
  std::string broken_;  // set once a collective timed out, a peer was lost or a wait interrupted
  std::optional<std::uint64_t> lost_in_;  // the collective running when a peer was lost
  std::atomic<bool> lost_{false};         // broken_ holds a lost peer's report
  // A waiter was interrupted: queued collectives are failed, never run (their caller may have
  // given their buffers up).
  bool interrupted_ = false;
  bool aborted_ = false;  // abort() ran
  // A collective failed with kComm or kTimeout (TCP reports a lost peer so, not through broken_).
  std::atomic<bool> comm_failed_{false};
  std::function<void()> interrupt_check_;

  std::mutex observer_mutex_;
  std::shared_ptr<CollectiveObserver> observer_;
  std::shared_ptr<records::LivePage> live_;
  const std::shared_ptr<ResumedStep> resumed_step_ = std::make_shared<ResumedStep>();
  std::shared_ptr<BodyGate> gate_ = std::make_shared<BodyGate>();  // body_gate.hpp
  std::thread thread_;
  std::unique_ptr<PeerWatch> watch_;  // last: its thread calls peer_lost()
};

}  // namespace dtrain::runtime
