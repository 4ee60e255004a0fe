#include "comm/point_to_point/mailbox.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "comm/point_to_point/wire_format.hpp"

namespace dtrain::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// The most one connection reads in one turn of the loop, so that one large message does not
// starve the others (nor hold the mutex from the callers for long).
constexpr std::size_t kReadTurn = std::size_t{4} << 20;
// Where a message nobody will take (its receive failed or expired) is read to, and dropped.
constexpr std::size_t kDiscardBytes = std::size_t{64} << 10;

bool would_block(int error) { return error == EAGAIN || error == EWOULDBLOCK || error == EINTR; }

std::string seconds_text(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

}  // namespace

struct Mailbox::Op {
  std::shared_ptr<Pending> pending;
  bool sends = false;
  char* buf = nullptr;
  std::size_t bytes = 0;
  int peer = kAnySource;  // the destination of a send, the source asked for by a receive
  std::int64_t tag = 0;
  Envelope envelope() const { return {peer, tag}; }
};

// A message that arrived before any receive took it.
struct Mailbox::Unclaimed {
  Envelope from;
  std::uint64_t bytes = 0;
  std::vector<char> data;       // its bytes, once kept (empty while parked)
  bool complete = false;        // every byte is in `data`
  Incoming* reading = nullptr;  // the connection still reading into `data`
  Incoming* parked = nullptr;   // the connection holding it, read no further until it is claimed
  Envelope envelope() const { return from; }
};

// A connection another rank opened to send to this one.
struct Mailbox::Incoming {
  enum class State { kHello, kHeader, kPayload, kParked };
  net::Socket socket;
  int source = -1;  // known after the hello
  State state = State::kHello;
  std::array<char, wire::kHeaderBytes> header{};
  std::size_t header_got = 0;
  std::int64_t tag = 0;
  std::uint64_t bytes = 0;
  std::uint64_t got = 0;  // of the payload
  // Where the payload goes: a receive, or the unclaimed message it is kept in; neither: dropped.
  std::shared_ptr<Op> target;
  std::shared_ptr<Unclaimed> keep;
};

// This rank's connection to one destination, opened by the first send to it.
struct Mailbox::Outgoing {
  int peer = -1;
  net::Socket socket;
  bool connecting = false;  // the loop is connecting, without the mutex
  net::Framed frame;        // the hello, then each message's header and bytes in turn
  bool framing = false;     // `frame` holds a message (or the hello) not yet fully sent
  bool hello_sent = false;
  std::deque<std::shared_ptr<Op>> queue;  // front: being sent
};

Mailbox::Mailbox(int rank, int size, std::vector<MailboxAddress> addresses, net::Socket listener,
                 std::chrono::milliseconds timeout)
    : rank_(rank),
      size_(size),
      addresses_(std::move(addresses)),
      listener_(std::move(listener)),
      timeout_(timeout),
      wake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      outgoing_(static_cast<std::size_t>(size)),
      gone_(static_cast<std::size_t>(size)) {
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
    const auto until = Clock::now() + timeout_;
    while (Clock::now() < until &&
           std::any_of(outgoing_.begin(), outgoing_.end(),
                       [](const auto& o) { return o && !o->queue.empty(); })) {
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
    for (const auto& op : out->queue) {
      finish(*op, describe(*op) + ": the communicator was destroyed before it was delivered");
    }
  }
}

std::shared_ptr<Pending> Mailbox::send(const void* buf, std::size_t bytes, int dst,
                                       std::int64_t tag) {
  auto op = std::make_shared<Op>();
  op->pending = std::make_shared<Pending>();
  op->pending->op = "send";
  op->pending->bytes = bytes;
  op->sends = true;
  // Never written through: a send only reads its buffer.
  op->buf = const_cast<char*>(static_cast<const char*>(buf));
  op->bytes = bytes;
  op->peer = dst;
  op->tag = tag;
  std::shared_ptr<Pending> pending = op->pending;
  std::lock_guard lock(mutex_);
  if (dst == rank_) {
    deliver_local(op);
    return pending;
  }
  const std::size_t d = static_cast<std::size_t>(dst);
  if (!gone_[d].empty()) {
    finish(*op, describe(*op) + ": " + gone_[d]);
    return pending;
  }
  if (!outgoing_[d]) {
    outgoing_[d] = std::make_unique<Outgoing>();
    outgoing_[d]->peer = dst;
  }
  outgoing_[d]->queue.push_back(op);
  pending->deadline = Clock::now() + timeout_;
  pending->expire = [this, weak = std::weak_ptr<Op>(op)] {
    if (auto o = weak.lock()) expire(o);
  };
  start_thread();
  wake();
  return pending;
}

std::shared_ptr<Pending> Mailbox::receive(void* buf, std::size_t bytes, int src, std::int64_t tag) {
  auto op = std::make_shared<Op>();
  op->pending = std::make_shared<Pending>();
  op->pending->op = "recv";
  op->pending->bytes = bytes;
  op->buf = static_cast<char*>(buf);
  op->bytes = bytes;
  op->peer = src;
  op->tag = tag;
  std::shared_ptr<Pending> pending = op->pending;
  std::lock_guard lock(mutex_);
  if (const auto i = first_message_for(unclaimed_, op->envelope())) {
    claim(op, *i);
    return pending;
  }
  if (src != kAnySource && src != rank_ && !gone_[static_cast<std::size_t>(src)].empty()) {
    finish(*op, describe(*op) + ": " + gone_[static_cast<std::size_t>(src)]);
    return pending;
  }
  posted_.push_back(op);
  pending->deadline = Clock::now() + timeout_;
  pending->expire = [this, weak = std::weak_ptr<Op>(op)] {
    if (auto o = weak.lock()) expire(o);
  };
  if (size_ > 1) start_thread();
  return pending;
}

void Mailbox::start_thread() {
  if (!thread_.joinable() && !stop_) thread_ = std::thread([this] { loop(); });
}

void Mailbox::wake() {
  const std::uint64_t one = 1;
  // A full counter (never, at 2^64 - 2) or EAGAIN still leaves the loop woken.
  (void)!::write(wake_.fd(), &one, sizeof one);
}

void Mailbox::finish(Op& op, const std::string& error, Error::Code code) {
  Pending& p = *op.pending;
  if (p.done.load(std::memory_order_acquire)) return;
  {
    std::lock_guard lock(p.mutex);
    if (!error.empty()) p.error = std::make_exception_ptr(Error(code, error));
    p.done.store(true, std::memory_order_release);
  }
  p.cv.notify_all();
}

std::string Mailbox::who(int rank) const {
  std::string text = "rank " + std::to_string(rank);
  const auto r = static_cast<std::size_t>(rank);
  if (r < addresses_.size() && !addresses_[r].node.empty()) {
    text += " (on " + addresses_[r].node + ")";
  }
  return text;
}

std::string Mailbox::describe(const Op& op) const {
  std::string text = "dtrain: ";
  text += op.sends ? "send to " : "recv from ";
  text += op.peer == kAnySource ? std::string("any rank") : who(op.peer);
  return text + " (tag " + std::to_string(op.tag) + ", " + std::to_string(op.bytes) +
         " bytes; rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ")";
}

// Within the process: the message is copied into its receive, or kept until one is posted.
void Mailbox::deliver_local(const std::shared_ptr<Op>& send) {
  const Envelope from{rank_, send->tag};
  if (const auto i = first_receive_for(posted_, from)) {
    const std::shared_ptr<Op> receive = posted_[*i];
    posted_.erase(posted_.begin() + static_cast<std::ptrdiff_t>(*i));
    receive->pending->source.store(rank_);
    if (receive->bytes != send->bytes) {
      finish(*receive, wire::size_mismatch(describe(*receive), send->bytes, who(rank_)),
             Error::Code::kInvalid);
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
  receive->pending->source.store(u->from.source);
  unclaimed_bytes_ -= u->data.size();
  Incoming* in = u->reading != nullptr ? u->reading : u->parked;
  if (receive->bytes != u->bytes) {
    finish(*receive, wire::size_mismatch(describe(*receive), u->bytes, who(u->from.source)),
           Error::Code::kInvalid);
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

void Mailbox::loop() {
  std::vector<pollfd> fds;
  std::vector<Incoming*> readers;
  std::vector<Outgoing*> writers;
  std::unique_lock lock(mutex_);
  while (!stop_) {
    // Connections to open: without the mutex, so that callers are not held up meanwhile.
    for (const auto& out : outgoing_) {
      if (!out || out->socket.valid() || out->connecting || out->queue.empty()) continue;
      const auto p = static_cast<std::size_t>(out->peer);
      out->connecting = true;
      lock.unlock();
      net::IoResult how = net::IoResult::kOk;
      net::Socket s =
          net::connect_once(addresses_[p].host, addresses_[p].port, Clock::now() + timeout_, &how);
      const std::string why = net::last_error_text();
      lock.lock();
      out->connecting = false;
      if (!s.valid()) {
        drop_outgoing(
            *out, "could not connect to its listener at " + addresses_[p].host + ":" +
                      std::to_string(addresses_[p].port) + " (" +
                      (how == net::IoResult::kClosed ? "refused: its process ended?" : why) + ")");
        continue;
      }
      out->socket = std::move(s);
    }
    fds.clear();
    readers.clear();
    writers.clear();
    fds.push_back({wake_.fd(), POLLIN, 0});
    if (listener_.valid()) fds.push_back({listener_.fd(), POLLIN, 0});
    const std::size_t first_reader = fds.size();
    for (const auto& in : incoming_) {
      if (!in->socket.valid() || in->state == Incoming::State::kParked) continue;
      fds.push_back({in->socket.fd(), POLLIN, 0});
      readers.push_back(in.get());
    }
    const std::size_t first_writer = fds.size();
    for (const auto& out : outgoing_) {
      if (!out || !out->socket.valid() || (out->queue.empty() && out->hello_sent)) continue;
      fds.push_back({out->socket.fd(), POLLOUT, 0});
      writers.push_back(out.get());
    }
    lock.unlock();
    (void)::poll(fds.data(), fds.size(), 1000);
    lock.lock();
    if (stop_) break;
    if (fds[0].revents != 0) {
      std::uint64_t count = 0;
      (void)!::read(wake_.fd(), &count, sizeof count);
    }
    if (listener_.valid() && fds[1].revents != 0) accept_new();
    for (std::size_t i = 0; i < readers.size(); ++i) {
      if (fds[first_reader + i].revents != 0) read(*readers[i]);
    }
    for (std::size_t i = 0; i < writers.size(); ++i) {
      if (fds[first_writer + i].revents != 0) write(*writers[i]);
    }
    std::erase_if(incoming_, [](const auto& in) { return !in->socket.valid(); });
  }
}

void Mailbox::accept_new() {
  for (;;) {
    const int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: none left (an error here is the connecting rank's to see)
    auto in = std::make_unique<Incoming>();
    in->socket = net::Socket(fd);
    incoming_.push_back(std::move(in));
  }
}

void Mailbox::read(Incoming& in) {
  std::size_t turn = 0;
  static thread_local std::array<char, kDiscardBytes> discard;  // the loop's thread only
  while (turn < kReadTurn && in.socket.valid()) {
    char* into = nullptr;
    std::size_t want = 0;
    switch (in.state) {
      case Incoming::State::kParked:
        return;
      case Incoming::State::kHello:
        into = in.header.data() + in.header_got;
        want = wire::kHelloBytes - in.header_got;
        break;
      case Incoming::State::kHeader:
        into = in.header.data() + in.header_got;
        want = wire::kHeaderBytes - in.header_got;
        break;
      case Incoming::State::kPayload: {
        const std::uint64_t left = in.bytes - in.got;
        if (in.target) {
          into = in.target->buf + in.got;
          want = left;
        } else if (in.keep) {
          into = in.keep->data.data() + in.got;
          want = left;
        } else {
          into = discard.data();
          want = std::min<std::uint64_t>(left, discard.size());
        }
        want = std::min(want, kReadTurn - turn);
        break;
      }
    }
    const ssize_t n = ::recv(in.socket.fd(), into, want, MSG_DONTWAIT);
    if (n == 0) {
      drop_incoming(in,
                    "closed its connection (its communicator was destroyed or its process "
                    "ended)");
      return;
    }
    if (n < 0) {
      if (!would_block(errno))
        drop_incoming(in, "its connection failed: " + net::last_error_text());
      return;
    }
    turn += static_cast<std::size_t>(n);
    if (in.state == Incoming::State::kPayload) {
      in.got += static_cast<std::uint64_t>(n);
      if (in.got == in.bytes) payload_done(in);
      continue;
    }
    in.header_got += static_cast<std::size_t>(n);
    if (in.state == Incoming::State::kHello && in.header_got == wire::kHelloBytes) {
      const int source = wire::read_hello(in.header.data(), size_);
      if (source < 0 || source == rank_) {
        in.socket = net::Socket();  // not a rank of this communicator: refused, said nothing
        return;
      }
      in.source = source;
      in.header_got = 0;
      in.state = Incoming::State::kHeader;
    } else if (in.state == Incoming::State::kHeader && in.header_got == wire::kHeaderBytes) {
      in.header_got = 0;
      header_arrived(in);
    }
  }
}

// A message's header: it goes to the earliest receive posted for it, or waits unclaimed.
void Mailbox::header_arrived(Incoming& in) {
  const wire::Header h = wire::read_header(in.header.data());
  in.tag = h.tag;
  in.bytes = h.bytes;
  in.got = 0;
  in.state = Incoming::State::kPayload;
  const Envelope from{in.source, h.tag};
  if (const auto i = first_receive_for(posted_, from)) {
    const std::shared_ptr<Op> receive = posted_[*i];
    posted_.erase(posted_.begin() + static_cast<std::ptrdiff_t>(*i));
    receive->pending->source.store(in.source);
    if (receive->bytes != h.bytes) {
      finish(*receive, wire::size_mismatch(describe(*receive), h.bytes, who(in.source)),
             Error::Code::kInvalid);
    } else {
      in.target = receive;
    }
  } else {
    auto u = std::make_shared<Unclaimed>();
    u->from = from;
    u->bytes = h.bytes;
    if (h.bytes <= kUnexpectedBudget - std::min(unclaimed_bytes_, kUnexpectedBudget)) {
      u->data.resize(h.bytes);
      unclaimed_bytes_ += h.bytes;
      u->reading = &in;
      in.keep = u;
    } else {
      u->parked = &in;
      in.state = Incoming::State::kParked;
    }
    unclaimed_.push_back(std::move(u));
  }
  if (in.state == Incoming::State::kPayload && in.bytes == 0) payload_done(in);
}

void Mailbox::payload_done(Incoming& in) {
  if (in.target) {
    finish(*in.target, "");
    in.target.reset();
  } else if (in.keep) {
    in.keep->complete = true;
    in.keep->reading = nullptr;
    in.keep.reset();
  }
  in.state = Incoming::State::kHeader;
}

void Mailbox::write(Outgoing& out) {
  for (;;) {
    if (!out.framing) {
      out.frame = net::Framed{};
      if (!out.hello_sent) {
        wire::write_hello(out.frame.header.data(), rank_, size_);
        out.frame.header_len = wire::kHelloBytes;
      } else if (!out.queue.empty()) {
        const Op& op = *out.queue.front();
        wire::write_header(out.frame.header.data(), {op.tag, op.bytes});
        out.frame.header_len = wire::kHeaderBytes;
        out.frame.data = op.buf;
        out.frame.data_len = op.bytes;
      } else {
        return;
      }
      out.framing = true;
    }
    const ssize_t n = net::send_some(out.socket.fd(), out.frame);
    if (n < 0) {
      if (!would_block(errno)) {
        drop_outgoing(out, errno == EPIPE || errno == ECONNRESET
                               ? "its connection closed (its process ended?)"
                               : "its connection failed: " + net::last_error_text());
      }
      return;
    }
    if (!out.frame.done()) continue;
    out.framing = false;
    if (!out.hello_sent) {
      out.hello_sent = true;
      continue;
    }
    finish(*out.queue.front(), "");
    out.queue.pop_front();
  }
}

void Mailbox::drop_incoming(Incoming& in, const std::string& why) {
  in.socket = net::Socket();
  if (in.source < 0) return;  // before its hello: nothing of it was in flight
  const std::string text = who(in.source) + " " + why;
  if (in.target) {
    finish(*in.target, describe(*in.target) + ": " + text + " " + std::to_string(in.got) +
                           " bytes into the message");
    in.target.reset();
  }
  // A message it had begun, or was holding back, never completes.
  std::erase_if(unclaimed_, [&](const std::shared_ptr<Unclaimed>& u) {
    if (u->reading != &in && u->parked != &in) return false;
    unclaimed_bytes_ -= u->data.size();
    return true;
  });
  in.keep.reset();
  std::string& gone = gone_[static_cast<std::size_t>(in.source)];
  if (gone.empty()) gone = text + " before sending a message this receive waits for";
  // Receives from that rank alone never complete now; messages it sent whole stay claimable.
  std::erase_if(posted_, [&](const std::shared_ptr<Op>& op) {
    if (op->peer != in.source) return false;
    finish(*op, describe(*op) + ": " + gone);
    return true;
  });
}

void Mailbox::drop_outgoing(Outgoing& out, const std::string& why) {
  out.socket = net::Socket();
  out.framing = false;
  std::string& gone = gone_[static_cast<std::size_t>(out.peer)];
  if (gone.empty()) gone = who(out.peer) + ": " + why;
  for (const auto& op : out.queue) finish(*op, describe(*op) + ": " + gone);
  out.queue.clear();
}

void Mailbox::expire(const std::shared_ptr<Op>& op) {
  std::lock_guard lock(mutex_);
  if (op->pending->done.load(std::memory_order_acquire)) return;
  const std::string limit = seconds_text(timeout_) + " s (DTRAIN_TIMEOUT)";
  if (op->sends) {
    Outgoing& out = *outgoing_[static_cast<std::size_t>(op->peer)];
    const auto at = std::find(out.queue.begin(), out.queue.end(), op);
    if (at == out.queue.begin() && out.framing) {
      // Half sent: the connection cannot carry another message after it.
      out.queue.pop_front();
      drop_outgoing(out, "a send to it passed its deadline in the middle of a message");
    } else if (at != out.queue.end()) {
      out.queue.erase(at);
    }
    finish(*op,
           describe(*op) + ": not taken within " + limit + ": " + who(op->peer) +
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
             (op->peer == kAnySource ? std::string("some rank") : who(op->peer)) +
             " to send one with this tag (is it alive, and sending to this rank?)",
         Error::Code::kTimeout);
}

}  // namespace dtrain::runtime
