// The mailbox's callers' side (mailbox.hpp): messages posted, matched, copied within the process,
// completed and expired. The sockets are mailbox_io.cpp's.
#include "comm/point_to_point/mailbox.hpp"

#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "comm/point_to_point/mailbox_parts.hpp"
#include "comm/point_to_point/message_space.hpp"
#include "comm/point_to_point/wire_format.hpp"
#include "comm/spin_wait.hpp"
#include "common/thread_name.hpp"

namespace dtrain::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// Up to this size a send is written on the caller's thread when its connection is idle.
constexpr std::size_t kDirectWriteBytes = std::size_t{64} << 10;

// Now on the kernel's coarse clock (its tick: 4 ms here), one tick on, so that a deadline from
// it is never early, only up to a tick late. Why: a message's deadline is read at each receive,
// and steady_clock took 26 ns there against 4 (a twentieth of an 8 B message's time within a
// node, docs/benchmarks.md). The same clock as steady_clock's (CLOCK_MONOTONIC), coarser.
Clock::time_point coarse_now() {
  static const Clock::duration tick = [] {
    timespec r{};
    ::clock_getres(CLOCK_MONOTONIC_COARSE, &r);
    return std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(r.tv_sec) +
                                                       std::chrono::nanoseconds(r.tv_nsec));
  }();
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(
             std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec))) +
         tick;
}

// What a send that went whole into its ring in its call returns (Mailbox::send_now): done, no
// error, shared by all of them and never written to again (its waiters only read `done`).
const std::shared_ptr<Pending>& sent_in_call() {
  static const std::shared_ptr<Pending> sent = [] {
    auto p = std::make_shared<Pending>();
    p->op = "send";
    p->done.store(true);
    return p;
  }();
  return sent;
}

}  // namespace

Mailbox::Mailbox(int rank, int size, std::vector<MailboxAddress> addresses, net::Socket listener,
                 std::chrono::milliseconds timeout, TimeoutSource source, bool rings)
    : rank_(rank),
      size_(size),
      addresses_(std::move(addresses)),
      listener_(std::move(listener)),
      timeout_{timeout, source},
      wake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      outgoing_(static_cast<std::size_t>(size)),
      gone_(static_cast<std::size_t>(size)),
      heard_from_(static_cast<std::size_t>(size)),
      node_peers_([&] {
        if (!rings) return false;
        for (int r = 0; r < size; ++r) {
          if (r != rank && same_node(r)) return true;
        }
        return false;
      }()),
      cores_for_all_([&] {
        long here = 0;
        for (int r = 0; r < size; ++r) here += r == rank || same_node(r) ? 1 : 0;
        return here <= ::sysconf(_SC_NPROCESSORS_ONLN);
      }()) {
  if (!wake_.valid()) {
    throw Error(Error::Code::kSystem,
                "dtrain: point-to-point: eventfd failed: " + net::last_error_text());
  }
}

Mailbox::~Mailbox() {
  std::unique_lock lock(mutex_);
  if (thread_.joinable()) {
    // Sends handed over are delivered, as MPI_Finalize completes them: a stage that sends its
    // last activations and exits must not lose them. Bounded by the deadline.
    const auto until = Clock::now() + timeout_.after;
    // A ring's messages are delivered once its peer has mapped it (and removed its name).
    while (Clock::now() < until &&
           std::any_of(outgoing_.begin(), outgoing_.end(), [](const auto& o) {
             return o && (!o->queue.empty() || (o->ring && !o->ring_opened));
           })) {
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      lock.lock();
    }
    stop_ = true;
    lock.unlock();
    wake();
    thread_.join();
    lock.lock();
  }
  for (const auto& op : posted_) {
    finish(*op, describe(*op) + ": the communicator was destroyed while it waited");
  }
  for (const auto& out : outgoing_) {
    if (!out) continue;
    // A ring its peer has not mapped by now keeps its name: the peer is alive (its connection
    // has not ended, else drop_outgoing removed it) and may still read the messages in it, as
    // it would read them from a socket's buffer. Left behind only when that peer hangs.
    for (const auto& op : out->queue) {
      finish(*op, describe(*op) + ": the communicator was destroyed before it was delivered");
    }
  }
}

std::shared_ptr<Pending> Mailbox::send(const void* buf, std::size_t bytes, int dst,
                                       std::int64_t tag,
                                       std::shared_ptr<const std::vector<int>> group_of,
                                       std::optional<Timeout> timeout, const CallHeader& call) {
  std::unique_lock lock(mutex_);
  const std::size_t d = static_cast<std::size_t>(dst);
  // Whole into its ring now (the common small message within a node): no Op to make.
  if (dst != rank_ && outgoing_[d] && gone_[d].why.empty() &&
      send_now(*outgoing_[d], buf, bytes, tag, call)) {
    return sent_in_call();
  }
  auto op = std::make_shared<Op>();
  op->pending->op = "send";
  op->pending->bytes = bytes;
  op->sends = true;
  // Never written through: a send only reads its buffer.
  op->buf = const_cast<char*>(static_cast<const char*>(buf));
  op->bytes = bytes;
  op->peer = dst;
  op->tag = tag;
  op->call = call;
  op->group_of = std::move(group_of);
  const std::shared_ptr<Pending> pending(op, op->pending);
  if (dst == rank_) {
    deliver_local(op);
    return pending;
  }
  if (!gone_[d].why.empty()) {
    finish(*op, describe(*op) + ": " + gone_text(*op));
    return pending;
  }
  if (!outgoing_[d]) {
    outgoing_[d] = std::make_unique<Outgoing>();
    outgoing_[d]->peer = dst;
    if (node_peers_ && same_node(dst) && rings_ < kMaxRings) {
      try {
        outgoing_[d]->ring = std::make_unique<ShmRing>(ShmRing::create());
        ring_writers_.push_back(outgoing_[d].get());
        ++rings_;
      } catch (const Error&) {
        // No shared memory (a full /dev/shm, a container without it): the socket carries them.
      }
    }
  }
  Outgoing& out = *outgoing_[d];
  // Into a ring, any size: what fits now, the rest as the reader makes room.
  const bool idle = out.ring ? !out.framing && out.queue.empty()
                             : out.socket.valid() && out.hello_sent && !out.framing &&
                                   out.queue.empty() && bytes <= kDirectWriteBytes;
  out.queue.push_back(op);
  op->timeout = timeout.value_or(timeout_);
  // A small message on a connection with nothing queued is written by the caller: it leaves
  // without waking the loop (two context switches less per message). Large ones are the loop's,
  // which moves them without holding up the callers.
  if (out.ring) pending->progress = this;
  if (idle) write(out);
  // Only a message still in flight has a deadline for its waiter to watch (mutex_ is held: it
  // cannot complete meanwhile, and its waiter is this caller, once this returns).
  if (!pending->done.load(std::memory_order_acquire)) set_deadline(op);
  // A ring's connection still has its hello to bring.
  if (out.queue.empty() && (!out.ring || out.hello_sent)) return pending;
  start_thread();
  wake();
  return pending;
}

std::shared_ptr<Pending> Mailbox::receive(void* buf, std::size_t bytes, int src, std::int64_t tag,
                                          std::shared_ptr<const std::vector<int>> group_of,
                                          std::optional<Timeout> timeout, const CallHeader& call) {
  auto op = std::make_shared<Op>();
  op->pending->op = "recv";
  op->pending->bytes = bytes;
  op->buf = static_cast<char*>(buf);
  op->bytes = bytes;
  op->peer = src;
  op->tag = tag;
  op->call = call;
  op->group_of = std::move(group_of);
  const std::shared_ptr<Pending> pending(op, op->pending);
  std::shared_ptr<Op> retired;  // freed when this returns, after the mutex
  std::lock_guard lock(mutex_);
  retired.swap(retired_);
  if (node_peers_) pending->progress = this;  // a waiter reads the rings (also a claimed message's)
  if (const auto i = first_message_for(unclaimed_, op->envelope())) {
    claim(op, *i);
    return pending;
  }
  posted_.push_back(op);
  keep_parked();  // a message parked from its sender holds back the one this receive waits for
  op->timeout = timeout.value_or(timeout_);
  set_deadline(op);
  bool wake_loop = false;
  if (src != kAnySource && src != rank_) {
    const auto s = static_cast<std::size_t>(src);
    if (!gone_[s].why.empty()) {
      settle(src);  // fails it now, unless a message of that rank may still be arriving
      return pending;
    }
    if (!heard_from_[s] && !outgoing_[s]) {
      // The loop may be asleep for its whole idle turn: woken, it sleeps only until this is due.
      wake_loop = watch_due_.empty();
      watch_due_.push_back({Clock::now() + kWatchAfter, op});
    }
  }
  if (size_ > 1) start_thread();
  if (wake_loop) wake();
  return pending;
}

void Mailbox::wait(Pending& message) {
  // As Engine::wait spins: while bytes move, and a little (spin_wait.hpp).
  if (message.progress != nullptr && !message.done.load(std::memory_order_acquire)) {
    spin_on(message, *message.progress);
  }
  while (!message.done.load(std::memory_order_acquire)) {
    {
      std::unique_lock lock(message.mutex);
      // In slices, so that the deadline is checked without a time point at the clock's end.
      message.sleepers.fetch_add(1);  // before `done` is read (Pending::sleepers)
      const bool done = message.cv.wait_for(lock, std::chrono::milliseconds(100),
                                            [&] { return message.done.load(); });
      message.sleepers.fetch_sub(1);
      if (done) break;
    }
    if (message.deadline && Clock::now() >= *message.deadline && message.expire) {
      message.expire();
    }
  }
  if (message.error) std::rethrow_exception(message.error);
}

void Mailbox::set_deadline(const std::shared_ptr<Op>& op) {
  Pending& p = *op->pending;
  p.deadline = coarse_now() + op->timeout.after;
  // Two pointers, held within the std::function (no allocation per message): the waiter holds
  // the Pending, and so the Op it lives in, while it calls this.
  p.expire = [this, o = op.get()] { expire(o->shared_from_this()); };
}

void Mailbox::start_thread() {
  if (!thread_.joinable() && !stop_) thread_ = named_thread("dtrain-messages", [this] { loop(); });
}

void Mailbox::wake() {
  const std::uint64_t one = 1;
  // A full counter (never, at 2^64 - 2) or EAGAIN still leaves the loop woken.
  (void)!::write(wake_.fd(), &one, sizeof one);
}

void Mailbox::finish(Op& op, const std::string& error, Error::Code code) {
  Pending& p = *op.pending;
  if (p.done.load(std::memory_order_acquire)) return;
  if (error.empty()) {
    // Both sequentially consistent, as the waiter's count and its look at `done`: either it sees
    // `done`, or this sees it counted and wakes it (Pending::sleepers).
    p.done.store(true);
    if (p.sleepers.load() == 0) return;
    { const std::lock_guard lock(p.mutex); }
    p.cv.notify_all();
    return;
  }
  {
    std::lock_guard lock(p.mutex);
    p.error = std::make_exception_ptr(Error(code, error));
    p.done.store(true);
  }
  p.cv.notify_all();
}

std::string Mailbox::who(int rank, const std::shared_ptr<const std::vector<int>>& group_of) const {
  const auto r = static_cast<std::size_t>(rank);
  return rank_name(rank, group_of.get(), r < addresses_.size() ? addresses_[r].node : "");
}

std::string Mailbox::describe(const Op& op) const {
  std::string text = "dtrain: ";
  text += op.sends ? "send to " : "recv from ";
  text += op.peer == kAnySource ? std::string("any rank") : who(op.peer, op.group_of);
  // A user's tag as given (a group's travel above its space's base, message_space.hpp);
  // libdtrain's own schedules' (negative) as they travel.
  const std::int64_t tag = op.tag >= 0 ? op.tag % MessageSpace::kTagsPerSpace : op.tag;
  return text + " (tag " + std::to_string(tag) + ", " + std::to_string(op.bytes) + " bytes; " +
         rank_of(rank_, op.group_of.get(), size_) + ")";
}

std::string Mailbox::gone_text(const Op& op) const {
  const Gone& gone = gone_[static_cast<std::size_t>(op.peer)];
  return gone.whole ? gone.why : who(op.peer, op.group_of) + gone.why;
}

std::string Mailbox::mismatch(const Op& receive, std::uint64_t bytes, const CallHeader& call,
                              int source) const {
  if (call != receive.call) {
    // Both ends' calls, the lower rank first (in the receive's numbering), as the world's TCP
    // collectives name them.
    const auto numbered = [&](int world) {
      return receive.group_of ? (*receive.group_of)[static_cast<std::size_t>(world)] : world;
    };
    const CallSeen theirs{source, call.count, CallWhat::unpack(call.what)};
    const CallSeen mine{rank_, receive.call.count, CallWhat::unpack(receive.call.what)};
    const std::vector<CallSeen> calls = numbered(source) < numbered(rank_)
                                            ? std::vector<CallSeen>{theirs, mine}
                                            : std::vector<CallSeen>{mine, theirs};
    return describe(receive) + ": " +
           mismatch_text("ranks", calls, [&](int r) { return who(r, receive.group_of); });
  }
  if (bytes != receive.bytes)
    return wire::size_mismatch(describe(receive), bytes, who(source, receive.group_of));
  return "";
}

// Within the process: the message is copied into its receive, or kept until one is posted.
void Mailbox::deliver_local(const std::shared_ptr<Op>& send) {
  const Envelope from{rank_, send->tag};
  if (const auto i = first_receive_for(posted_, from)) {
    const std::shared_ptr<Op> receive = posted_[*i];
    posted_.erase(posted_.begin() + static_cast<std::ptrdiff_t>(*i));
    receive->set_source(rank_);
    if (const std::string wrong = mismatch(*receive, send->bytes, send->call, rank_);
        !wrong.empty()) {
      finish(*receive, wrong, Error::Code::kInvalid);
    } else {
      if (send->bytes > 0) std::memcpy(receive->buf, send->buf, send->bytes);
      finish(*receive, "");
    }
    finish(*send, "");
    return;
  }
  // Kept whatever the budget: a send to itself has no connection to hold back.
  auto u = std::make_shared<Unclaimed>();
  u->from = from;
  u->bytes = send->bytes;
  u->call = send->call;
  u->data.assign(send->buf, send->buf + send->bytes);
  u->complete = true;
  unclaimed_bytes_ += send->bytes;
  unclaimed_.push_back(std::move(u));
  finish(*send, "");
}

// A receive takes the message unclaimed_[index]: its bytes now, or as they arrive.
void Mailbox::claim(const std::shared_ptr<Op>& receive, std::size_t index) {
  const std::shared_ptr<Unclaimed> u = unclaimed_[index];
  unclaimed_.erase(unclaimed_.begin() + static_cast<std::ptrdiff_t>(index));
  u->keep_after.reset();  // no longer parked_'s
  receive->set_source(u->from.source);
  unclaimed_bytes_ -= u->data.size();
  Incoming* in = u->reading != nullptr ? u->reading : u->parked;
  if (const std::string wrong = mismatch(*receive, u->bytes, u->call, u->from.source);
      !wrong.empty()) {
    finish(*receive, wrong, Error::Code::kInvalid);
    if (in != nullptr) {  // the rest of its bytes are read and dropped
      in->keep.reset();
      in->target.reset();
      in->state = Incoming::State::kPayload;
      wake();
    }
    return;
  }
  if (u->complete) {
    if (u->bytes > 0) std::memcpy(receive->buf, u->data.data(), u->bytes);
    finish(*receive, "");
    return;
  }
  // Still arriving: what came so far is copied, the rest goes straight into the receive.
  if (in->got > 0) std::memcpy(receive->buf, u->data.data(), in->got);
  in->keep.reset();
  in->target = receive;
  in->state = Incoming::State::kPayload;
  wake();  // a parked connection is polled again
}

void Mailbox::expire(const std::shared_ptr<Op>& op) {
  std::lock_guard lock(mutex_);
  if (op->pending->done.load(std::memory_order_acquire)) return;
  const std::string limit = timeout_text(op->timeout);
  if (op->sends) {
    Outgoing& out = *outgoing_[static_cast<std::size_t>(op->peer)];
    const auto at = std::find(out.queue.begin(), out.queue.end(), op);
    // (A message the reader reads from this process's memory, awaiting, likewise.)
    if (at == out.queue.begin() && (out.framing || out.awaiting)) {
      // Half sent: the connection cannot carry another message after it.
      out.queue.pop_front();
      drop_outgoing(out, "a send to it passed its deadline in the middle of a message");
    } else if (at != out.queue.end()) {
      out.queue.erase(at);
    }
    finish(*op,
           describe(*op) + ": not taken within " + limit + ": " + who(op->peer, op->group_of) +
               " read none or only part of it (is it alive, and receiving from this rank?)",
           Error::Code::kTimeout);
    return;
  }
  std::erase(posted_, op);
  for (const auto& in : incoming_) {
    if (in->target == op) in->target.reset();  // the rest of its bytes are dropped
  }
  finish(*op,
         describe(*op) + ": no message within " + limit + "; expected " +
             (op->peer == kAnySource ? std::string("some rank") : who(op->peer, op->group_of)) +
             " to send one with this tag (is it alive, and sending to this rank?)",
         Error::Code::kTimeout);
}

}  // namespace dtrain::runtime
