#include "comm/engine.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "comm/lost_peers/peer_alarm.hpp"
#include "comm/point_to_point/mailbox.hpp"
#include "comm/point_to_point/message_space.hpp"
#include "comm/spin_wait.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// Thrown through a backend's poll() when an inline collective passes its deadline or loses a
// peer, carrying the Error that says so, so that execute() does not wrap it a second time.
struct Abandoned {
  std::exception_ptr error;
};

// How often a waiting caller sleeps between checks of the deadline and the interrupt check: often
// enough that Ctrl-C feels immediate, rarely enough to cost nothing.
constexpr auto kWaitSlice = std::chrono::milliseconds(100);

// One write(2), not stdio: the launcher may kill this process any moment now, and a line left
// in a stdio buffer would die with it.
void write_stderr_line(const std::string& text) {
  const std::string line = text + "\n";
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = write(STDERR_FILENO, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace

Engine::Engine(std::unique_ptr<Communicator> backend, int rank, int size, Settings settings)
    : backend_(std::move(backend)),
      rank_(rank),
      size_(size),
      settings_(std::move(settings)),
      threaded_(backend_->remote()),
      spin_(engine_spin()) {
  // The watch before the progress thread: if either throws, nothing joinable is left behind.
  const std::vector<PeerProcess> node = backend_->node_processes();
  std::unique_ptr<PeerAlarm> alarm = backend_->take_peer_alarm();
  const auto self =
      std::find_if(node.begin(), node.end(), [&](const PeerProcess& p) { return p.rank == rank_; });
  if (self != node.end() || alarm) {
    PeerProcess me;
    me.rank = rank_;
    watch_ = std::make_unique<PeerWatch>(
        node, self != node.end() ? *self : me,
        [this](const PeerProcess& lost, int told_by, const std::function<void()>& announce) {
          return peer_lost(lost, told_by, announce);
        },
        std::move(alarm));
  }
}

Engine::~Engine() {
  watch_.reset();  // first: its thread may be calling peer_lost()
  bool stuck = false;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    // Broken by a lost peer, the progress thread may be idle rather than stuck in the backend:
    // then it must be joined (a detached idle thread would wake on this object's freed mutex),
    // and nothing queued may reach the broken backend.
    stuck = !broken_.empty() && running_ != nullptr;
    if (!broken_.empty()) queue_.clear();
  }
  work_.notify_all();
  if (!thread_.joinable()) return;
  // Stuck only if the progress thread is inside the body (the running call may be a caller's,
  // inline); otherwise it is joined and must start no body on the broken backend.
  const bool orphan = stuck && gate_->orphan_if_inside();
  if (!orphan) {
    thread_.join();
  } else {
    // Stuck in the backend for good (joining would hang), which was told to abandon its
    // resources; should the body return after all, it touches nothing of this (BodyGate).
    thread_.detach();
  }
  if (stuck) (void)backend_.release();  // destroying it would call into the stuck library
}

void Engine::set_observer(std::shared_ptr<CollectiveObserver> observer) {
  std::lock_guard lock(observer_mutex_);
  observer_ = std::move(observer);
}

std::shared_ptr<Pending> Engine::submit(const char* op, std::size_t bytes,
                                        std::function<void()> body, bool polls) {
  auto p = std::make_shared<Pending>();
  p->op = op;
  p->bytes = bytes;
  p->polls = polls;
  p->body = std::move(body);
  if (!threaded_) {
    p->seq = next_seq_++;
    execute(*p, p->body);
    return p;
  }
  enqueue(p, nullptr);
  return p;
}

// The first collective queued starts the progress thread, not the making (engine.hpp: why).
void Engine::enqueue(const std::shared_ptr<Pending>& p,
                     std::function<void(std::uint64_t)> numbered) {
  {
    std::lock_guard lock(mutex_);
    if (!broken_.empty()) throw_broken();
    p->seq = next_seq_++;
    if (numbered) p->body = [b = std::move(numbered), seq = p->seq] { b(seq); };
    queue_.push_back(p);
    queued_.fetch_add(1, std::memory_order_release);
    if (!thread_.joinable())
      thread_ = named_thread("dtrain-engine", [this, g = gate_] { loop(g); });
  }
  work_.notify_one();
}

std::shared_ptr<Pending> Engine::submit_numbered(const char* op, std::size_t bytes,
                                                 std::function<void(std::uint64_t)> body) {
  auto p = std::make_shared<Pending>();
  p->op = op;
  p->bytes = bytes;
  if (!threaded_) {
    p->seq = next_seq_++;
    p->body = [b = std::move(body), seq = p->seq] { b(seq); };
    execute(*p, p->body);
    return p;
  }
  enqueue(p, std::move(body));
  return p;
}

bool Engine::run_inline(const char* op, std::size_t bytes, const std::function<void()>& body) {
  if (!threaded_) return false;
  auto p = std::make_shared<Pending>();
  p->op = op;
  p->bytes = bytes;
  Clock::time_point deadline;
  {
    std::lock_guard lock(mutex_);
    if (!broken_.empty()) throw_broken();
    if (running_ || !queue_.empty()) return false;
    p->seq = next_seq_++;
    running_ = p;  // keeps the progress thread from starting queued work meanwhile
    running_since_ = Clock::now();
    // The body waits only through poll(), whose check below is the deadline itself: the one
    // DTRAIN_TIMEOUT sets and the message states.
    p->polls = true;
    deadline = running_since_ + limit(p.get());
  }
  Clock::time_point next_interrupt_check = running_since_ + kWaitSlice;
  const std::function<void()> check = [this, deadline, &next_interrupt_check, &p] {
    if (lost_.load(std::memory_order_relaxed)) {
      std::lock_guard lock(mutex_);
      throw Abandoned{std::make_exception_ptr(Error(Error::Code::kComm, broken_))};
    }
    const Clock::time_point now = Clock::now();
    if (interrupt_check_ && now >= next_interrupt_check) {
      next_interrupt_check = now + kWaitSlice;
      try {
        check_interrupt(*p);
      } catch (...) {
        throw Abandoned{std::current_exception()};
      }
    }
    if (now <= deadline) return;
    std::lock_guard lock(mutex_);
    try {
      throw_timeout();
    } catch (const Error&) {
      throw Abandoned{std::current_exception()};
    }
  };
  backend_->set_poll_check(&check);
  execute(*p, body);
  backend_->set_poll_check(nullptr);
  // Wakes the progress thread only for work another thread queued meanwhile: a needless wake-up
  // costs two context switches, more than the collective itself.
  if (queued_.load(std::memory_order_acquire) > 0) work_.notify_one();
  if (p->error) std::rethrow_exception(p->error);
  return true;
}

bool Engine::execute(Pending& p, const std::function<void()>& body, BodyGate* gate) noexcept {
  std::shared_ptr<CollectiveObserver> observer;
  {
    std::lock_guard lock(observer_mutex_);
    observer = observer_;
  }
  if (observer) observer->on_collective(p.seq, p.op, p.bytes, true, false);
  if (live_) live_->enter(p.seq, p.op, p.bytes);
  Communicator* backend = backend_.get();  // read before the gate: the Engine may go meanwhile
  std::exception_ptr thrown;
  if (gate != nullptr && !gate->enter()) {
    thrown = std::make_exception_ptr(
        Error(Error::Code::kComm, "dtrain: the communicator was closed before this call began"));
  }
  if (!thrown) {
    try {
      backend->begin_call(p.seq);
      body();
    } catch (...) {
      thrown = std::current_exception();
    }
  }
  if (gate != nullptr && !gate->leave()) {
    // The Engine was destroyed meanwhile: only `p` (held by its shared_ptr) is still there.
    {
      std::lock_guard done(p.mutex);
      p.error = thrown;
      p.done.store(true, std::memory_order_release);
    }
    p.cv.notify_all();
    return false;
  }
  if (thrown) {
    try {
      std::rethrow_exception(thrown);
    } catch (const Abandoned& a) {
      p.error = a.error;  // the message already names the collective
    } catch (const Error& e) {
      if (e.code() == Error::Code::kComm || e.code() == Error::Code::kTimeout) {
        comm_failed_.store(true, std::memory_order_relaxed);
      }
      // Name the collective: "dtrain: allreduce #17: <what the backend said>".
      std::string text = e.what();
      if (text.rfind("dtrain: ", 0) == 0) text.erase(0, 8);
      p.error = std::make_exception_ptr(
          Error(e.code(), "dtrain: " + std::string(p.op) + " #" + std::to_string(p.seq) + " (" +
                              std::to_string(p.bytes) + " bytes, " + rank_text() + "): " + text));
    } catch (...) {
      p.error = std::current_exception();
    }
  }
  if (observer) observer->on_collective(p.seq, p.op, p.bytes, false, p.error != nullptr);
  if (live_) live_->leave(p.seq);
  {
    // Before the waiter wakes: its next collective may then run inline at once.
    std::lock_guard lock(mutex_);
    if (running_.get() == &p) running_.reset();
  }
  {
    std::lock_guard lock(p.mutex);
    p.done.store(true, std::memory_order_release);
  }
  p.cv.notify_all();
  return true;
}

void Engine::loop(const std::shared_ptr<BodyGate>& gate) {
  for (;;) {
    std::shared_ptr<Pending> p;
    const auto spin_until = Clock::now() + spin_;
    while (queued_.load(std::memory_order_acquire) == 0 && Clock::now() < spin_until) {
      std::this_thread::yield();
    }
    {
      std::unique_lock lock(mutex_);
      // Not while a caller runs a collective inline (run_inline holds running_).
      work_.wait(lock, [&] { return stop_ || (!queue_.empty() && !running_); });
      if (queue_.empty()) return;  // stopping, nothing left
      queued_.fetch_sub(1, std::memory_order_relaxed);
      p = std::move(queue_.front());
      queue_.pop_front();
      if (interrupted_) {
        p->error = std::make_exception_ptr(
            Error(Error::Code::kComm,
                  "dtrain: communicator unusable after an earlier failure: " + broken_));
      } else {
        running_ = p;
        running_since_ = Clock::now();
      }
    }
    if (p->error) {
      {
        std::lock_guard lock(p->mutex);
        p->done.store(true, std::memory_order_release);
      }
      p->cv.notify_all();
      continue;
    }
    if (!execute(*p, p->body, gate.get())) return;  // the Engine is gone: touch nothing of it
  }
}

bool Engine::test(Pending& p) {
  // A message within a node moves when its caller looks (as MPI_Test progresses MPI's).
  if (!p.done.load(std::memory_order_acquire) && p.progress != nullptr) p.progress->step();
  if (!p.done.load(std::memory_order_acquire)) return false;
  if (p.error) std::rethrow_exception(p.error);
  return true;
}

void Engine::wait(Pending& p) {
  // Done at once or as it spun: no clock read. Spins even on one core (spin_wait.hpp says why).
  if (p.done.load(std::memory_order_acquire) && !p.error) return;
  const bool moves = p.progress != nullptr && !p.done.load(std::memory_order_acquire);
  if (moves && spin_on(p, *p.progress) && !p.error) return;
  const auto spin_until = Clock::now() + (moves ? std::chrono::microseconds(0) : spin_);
  while (!p.done.load(std::memory_order_acquire) && Clock::now() < spin_until) {
    std::this_thread::yield();
  }
  while (!p.done.load(std::memory_order_acquire)) {
    std::unique_lock sleeping(p.mutex);
    p.sleepers.fetch_add(1);  // before `done` is read (Pending::sleepers)
    const bool done = p.cv.wait_for(sleeping, kWaitSlice, [&] { return p.done.load(); });
    p.sleepers.fetch_sub(1);
    sleeping.unlock();
    if (done) break;
    check_interrupt(p);
    if (p.deadline) {
      // A message, not a collective: its own deadline, and no collective's failure stops it.
      if (Clock::now() >= *p.deadline && p.expire) p.expire();
      continue;
    }
    std::lock_guard lock(mutex_);
    if (!broken_.empty()) throw_broken(p.seq);
    if (running_ && Clock::now() - running_since_ > limit(running_.get())) throw_timeout();
  }
  if (p.error) std::rethrow_exception(p.error);
}

std::chrono::milliseconds Engine::limit(const Pending* p) const {
  const bool grace = backend_->enforces_deadline() && !(p != nullptr && p->polls);
  return grace ? timeout() + std::chrono::seconds(2) : timeout();
}

std::string Engine::where(const Pending* p) const {
  const std::string backend(backend_->backend());
  const std::string rank = rank_text();
  if (p == nullptr) {
    return "between collectives (" + backend + ", " + rank + ", next #" +
           std::to_string(next_seq_) + ")";
  }
  return std::string(p->op) + " #" + std::to_string(p->seq) + " (" + std::to_string(p->bytes) +
         " bytes, " + backend + ", " + rank + ")";
}

std::string Engine::rank_text() const {
  const MessageSpace& space = backend_->message_space();
  return rank_of(space.world(rank_), space.group_of().get(), size_);
}

bool Engine::peer_lost(const PeerProcess& peer, int told_by,
                       const std::function<void()>& announce) noexcept {
  // MPI_Finalize waits for every rank, so a peer that ends after it began here has finished.
  if (backend_->peers_may_exit()) return false;
  try {
    // Messages waiting for it fail at once, whatever this rank's collectives do (a pipeline stage
    // blocked in a receive from the lost rank is in no collective).
    if (Mailbox* m = backend_->mailbox())
      m->peer_lost(peer.rank, lost_peer_text(peer.rank, peer.host, told_by));
    std::string report;
    {
      std::lock_guard lock(mutex_);
      // This rank already failed (a timeout) and said so; a peer that then exits most likely
      // failed the same way, and a second report would only blur the first.
      if (!broken_.empty()) return false;
      // A peer that ends within the last second (or tenth, at most half) of this rank's own wait
      // most likely timed out in the same collective and exited: blaming it would name a victim.
      // This rank's own timeout, due at once, names the rank that is really missing.
      if (running_) {
        const Clock::duration limit_now = limit(running_.get());
        const Clock::duration margin = std::min<Clock::duration>(
            limit_now / 2, std::max<Clock::duration>(std::chrono::seconds(1), limit_now / 10));
        if (Clock::now() - running_since_ + margin >= limit_now) return false;
      }
      report = "dtrain: " + where(running_.get()) + ": " +
               lost_peer_text(peer.rank, peer.host, told_by) +
               "; this rank's collectives fail from now on";
      // The alarm and the line go out before broken_ is set: a caller that sees the failure (and
      // may print its own error, or exit) must find dtrain's line already on stderr, above its
      // own, and the other ranks must hear whom this rank saw end before they can see it end.
      if (announce) announce();
      write_stderr_line(report);
      broken_ = report;
      if (running_) lost_in_ = running_->seq;
      // A collective waiting for the lost rank never returns: MPI must not be finalized.
      backend_->abandon();
      lost_.store(true, std::memory_order_relaxed);
    }
    return true;
  } catch (...) {
    // Out of memory for the message: the launcher's own report will have to do.
    return false;
  }
}

void Engine::abort(const std::string& report, bool at_exit) noexcept {
  bool tell = false;
  {
    std::lock_guard lock(mutex_);
    if (aborted_) return;
    aborted_ = true;
    // Ranks that lost a peer stop because of it, and each of them leaving would be one more
    // line and alarm naming a rank that did nothing wrong.
    tell = broken_.empty() && !comm_failed_.load(std::memory_order_relaxed);
    if (tell && !report.empty()) write_stderr_line(report);
    if (broken_.empty()) {
      try {
        broken_ = report.empty() ? std::string("dtrain: this rank left the job") : report;
      } catch (...) {
        // Out of memory: later collectives fail without the text; nothing else changes.
      }
      // Queued collectives are failed, never run: no rank is going to match them.
      interrupted_ = true;
    }
    backend_->abandon();
  }
  // Outside the lock: it sends for about 10 ms (or stops the watch's thread), and that thread
  // may need the lock to report a peer that ends meanwhile (it then finds broken_ set: silent).
  if (!tell || !watch_) return;
  if (at_exit) {
    watch_->leave_at_exit();
  } else {
    watch_->leave();
  }
}

void Engine::check_interrupt(const Pending& p) {
  if (!interrupt_check_) return;
  try {
    interrupt_check_();
  } catch (...) {
    std::lock_guard lock(mutex_);
    if (broken_.empty()) {
      broken_ = "dtrain: " + where(&p) +
                ": interrupted while waiting for the other ranks; a collective cannot be "
                "cancelled, so this communicator is unusable from now on";
      interrupted_ = true;
      // The collective may stay inside the backend for good: MPI must not be finalized.
      backend_->abandon();
    }
    throw;
  }
}

// Called with mutex_ held, running_ set and overdue.
void Engine::throw_timeout() {
  const std::string missing = backend_->missing_ranks();
  broken_ = "dtrain: " + where(running_.get()) + ": not complete after " +
            timeout_text(settings_.deadline()) + "; missing ranks: " +
            (missing.empty() ? std::string("unknown (") + std::string(backend_->backend()) +
                                   " does not say which ranks have not arrived; compare the "
                                   "ranks' last \"coll\" records in rank-NNNNN.jsonl)"
                             : missing) +
            "; expected every rank to enter the same collective (a rank died, hangs or called "
            "a different collective)";
  backend_->abandon();
  // The backend's call never returns, so execute() writes no exit heartbeat: record the failure
  // here, for `dtrain logs --hang` to tell this rank's wait from a rank that never came.
  std::shared_ptr<CollectiveObserver> observer;
  {
    std::lock_guard observer_lock(observer_mutex_);  // never held while mutex_ is taken
    observer = observer_;
  }
  if (observer) observer->on_collective(running_->seq, running_->op, running_->bytes, false, true);
  throw Error(Error::Code::kTimeout, broken_);
}

void Engine::throw_broken(std::optional<std::uint64_t> seq) const {
  if (seq && seq == lost_in_) throw Error(Error::Code::kComm, broken_);
  throw Error(Error::Code::kComm,
              "dtrain: communicator unusable after an earlier failure: " + broken_);
}

}  // namespace dtrain::runtime
