// The mailbox's loop (mailbox.hpp): its thread accepts connections, reads hellos, headers and
// payloads as they come, and writes each destination's messages in turn, without blocking.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "comm/point_to_point/mailbox.hpp"
#include "comm/point_to_point/mailbox_parts.hpp"
#include "comm/point_to_point/wire_format.hpp"

namespace dtrain::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// The most one connection reads in one turn of the loop, so that one large message does not
// starve the others (nor hold the mutex from the callers for long).
constexpr std::size_t kReadTurn = std::size_t{4} << 20;
// Where a message nobody will take (its receive failed or expired) is read to, and dropped.
constexpr std::size_t kDiscardBytes = std::size_t{64} << 10;

using net::would_block;

// Why a connection this rank writes to ended: read 0 bytes (`eof`) or failed with errno. A reset
// is a peer's end too: a killed rank's kernel resets what its process had not accepted or read.
std::string connection_end(bool eof) {
  if (eof || errno == EPIPE || errno == ECONNRESET)
    return "its connection closed (its process ended?)";
  return "its connection failed: " + net::last_error_text();
}

// Why a connection this rank reads from ended: read 0 bytes (`eof`) or failed with errno. A reset
// is the peer's close as well: a peer that leaves with bytes of this rank's unread (a wake-up, a
// message) has its kernel reset the connection instead of closing it, which the peer did no less.
std::string incoming_end(bool eof) {
  if (eof || errno == ECONNRESET) {
    return "closed its connection (its communicator was destroyed or its process ended)";
  }
  return "its connection failed: " + net::last_error_text();
}

}  // namespace

void Mailbox::loop() {
  std::vector<pollfd> fds;
  std::vector<Incoming*> readers;
  std::vector<Outgoing*> writers;
  std::unique_lock lock(mutex_);
  while (!stop_) {
    open_watches();
    // Connections to open: without the mutex, so that callers are not held up meanwhile.
    for (const auto& out : outgoing_) {
      if (!out || out->socket.valid() || out->connecting) continue;
      if (out->queue.empty() && !(out->ring && !out->hello_sent) && !out->watches) continue;
      const auto p = static_cast<std::size_t>(out->peer);
      out->connecting = true;
      lock.unlock();
      net::IoResult how = net::IoResult::kOk;
      net::Socket s = net::connect_once(addresses_[p].host, addresses_[p].port,
                                        Clock::now() + timeout_.after, &how);
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
      if (!out || !out->socket.valid()) continue;
      if (out->ring) {  // its wake-ups, and its end; writable only for the hello
        fds.push_back({out->socket.fd(), out->hello_sent ? short{POLLIN} : short{POLLOUT}, 0});
      } else {  // its end, whether or not it has bytes to send: the peer's end
        const bool sends = !out->queue.empty() || !out->hello_sent;
        fds.push_back({out->socket.fd(), sends ? short{POLLIN | POLLOUT} : short{POLLIN}, 0});
      }
      writers.push_back(out.get());
    }
    keep_parked();
    const int sleep_ms = park_sleep_ms(watch_sleep_ms(ring_sleep_ms()));
    const bool busy = sleep_ms == 0;
    lock.unlock();
    (void)::poll(fds.data(), fds.size(), sleep_ms);
    lock.lock();
    if (stop_) break;
    if (fds[0].revents != 0) {
      std::uint64_t count = 0;
      (void)!::read(wake_.fd(), &count, sizeof count);
    }
    if (listener_.valid() && fds[1].revents != 0) accept_new();
    // Writers first, as in move_rings (mailbox_rings.cpp).
    for (std::size_t i = 0; i < writers.size(); ++i) {
      const short revents = fds[first_writer + i].revents;
      if (revents == 0) continue;
      if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0) read_back(*writers[i]);
      if (writers[i]->socket.valid()) write(*writers[i]);
    }
    for (std::size_t i = 0; i < readers.size(); ++i) {
      if (fds[first_reader + i].revents != 0) read(*readers[i]);
    }
    // Hellos read meanwhile may tell whose connection was the one a gone rank's receives waited on.
    for (const int peer : std::exchange(unsettled_, {})) settle(peer);
    if (busy) move_rings();
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
  if (in.ring) {
    // Its socket brings wake-ups (read and dropped) and tells when the writer is gone.
    std::array<char, 64> wakeups;
    for (;;) {
      const ssize_t n = ::recv(in.socket.fd(), wakeups.data(), wakeups.size(), MSG_DONTWAIT);
      if (n > 0) continue;
      if (n < 0 && would_block(errno)) break;
      const std::string why = incoming_end(n == 0);
      while (read_ring(in)) {
      }  // what it wrote before it went is delivered all the same
      drop_incoming(in, why);
      return;
    }
    read_ring(in);
    return;
  }
  read_stream(in);
}

// Where `in`'s next bytes go in its state, at most `room` of a payload; null while it is parked.
Mailbox::Span Mailbox::next_span(Incoming& in, std::size_t room) {
  // The loop's thread, and callers spinning on a ring (Progress): one each.
  static thread_local std::array<char, kDiscardBytes> discard;
  switch (in.state) {
    case Incoming::State::kParked:
      return {};
    case Incoming::State::kRingName:
      return {in.ring_name.data() + in.header_got, wire::kRingNameBytes - in.header_got};
    case Incoming::State::kHello:
      return {in.header.data() + in.header_got, wire::kHelloBytes - in.header_got};
    case Incoming::State::kHeader:
      return {in.header.data() + in.header_got, wire::kHeaderBytes - in.header_got};
    case Incoming::State::kWhere:
      return {in.where.data() + in.header_got, wire::kWhereBytes - in.header_got};
    case Incoming::State::kPayload:
      break;
  }
  const std::uint64_t left = in.bytes - in.got;
  if (in.target) return {in.target->buf + in.got, std::min<std::uint64_t>(left, room)};
  if (in.keep) return {in.keep->data.data() + in.got, std::min<std::uint64_t>(left, room)};
  // Nobody takes them: read and dropped.
  return {discard.data(), std::min<std::uint64_t>({left, discard.size(), room}), true};
}

// Up to `to.bytes` of `in`'s bytes into `to`: from the sender's memory, the ring or the socket.
// What read() returns; 0 from a ring or -1 with EAGAIN: nothing there yet.
ssize_t Mailbox::read_some(Incoming& in, const Span& to) {
  if (in.state == Incoming::State::kPayload && in.remote != 0) {
    // From the sender's memory; bytes nobody takes are not read at all.
    return to.discards ? static_cast<ssize_t>(to.bytes)
                       : in.ring->read_writer(in.remote + in.got, to.into, to.bytes);
  }
  if (in.ring) return static_cast<ssize_t>(in.ring->read(to.into, to.bytes));
  return ::recv(in.socket.fd(), to.into, to.bytes, MSG_DONTWAIT);
}

// Bytes of `in`'s hello, ring name, header or address came (header_got): once whole, the next
// state. nullopt: read on; else what read_stream returns now (the connection was refused, or its
// ring is read from now on by read_ring).
std::optional<bool> Mailbox::framing_done(Incoming& in) {
  const std::size_t want = in.state == Incoming::State::kHello      ? wire::kHelloBytes
                           : in.state == Incoming::State::kRingName ? wire::kRingNameBytes
                           : in.state == Incoming::State::kWhere    ? wire::kWhereBytes
                                                                    : wire::kHeaderBytes;
  if (in.header_got < want) return std::nullopt;
  in.header_got = 0;
  switch (in.state) {
    case Incoming::State::kHello: {
      const int source = wire::read_hello(in.header.data(), size_,
                                          addresses_[static_cast<std::size_t>(rank_)].key);
      if (source < 0 || source == rank_) {
        in.socket = net::Socket();  // not a rank of this communicator: refused, said nothing
        return false;
      }
      in.source = source;
      heard_from_[static_cast<std::size_t>(source)] = true;
      in.state = wire::hello_has_ring(in.header.data()) ? Incoming::State::kRingName
                                                        : Incoming::State::kHeader;
      return std::nullopt;
    }
    case Incoming::State::kRingName:
      in.state = Incoming::State::kHeader;
      if (open_ring(in)) read_ring(in);  // from now on the socket brings wake-ups only
      return true;
    case Incoming::State::kHeader:
      if (in.ring && (wire::read_header(in.header.data()).bytes & wire::kInSenderMemory) != 0) {
        in.state = Incoming::State::kWhere;  // its address comes next
      } else {
        header_arrived(in);
      }
      return std::nullopt;
    case Incoming::State::kWhere:
      std::memcpy(&in.remote, in.where.data(), sizeof in.remote);
      header_arrived(in);
      return std::nullopt;
    case Incoming::State::kPayload:
    case Incoming::State::kParked:
      break;
  }
  return std::nullopt;
}

bool Mailbox::read_stream(Incoming& in) {
  std::size_t turn = 0;
  while (turn < kReadTurn && in.socket.valid()) {
    const Span to = next_span(in, kReadTurn - turn);
    if (to.into == nullptr) return turn > 0;  // parked
    const bool remote = in.state == Incoming::State::kPayload && in.remote != 0;
    const ssize_t n = read_some(in, to);
    if (n == 0 && !remote && in.ring) return turn > 0;  // nothing more written yet
    if (n == 0 || (n < 0 && remote)) {
      drop_incoming(in, remote
                            ? "could not be read from its memory (process_vm_readv: " +
                                  (n == 0 ? std::string("nothing read") : net::last_error_text()) +
                                  "; its process ended?)"
                            : incoming_end(true));
      return true;
    }
    if (n < 0) {
      if (!would_block(errno)) drop_incoming(in, incoming_end(false));
      return turn > 0;
    }
    turn += static_cast<std::size_t>(n);
    if (in.state == Incoming::State::kPayload) {
      in.got += static_cast<std::uint64_t>(n);
      if (in.got == in.bytes) payload_done(in);
      continue;
    }
    in.header_got += static_cast<std::size_t>(n);
    if (const std::optional<bool> moved = framing_done(in)) return *moved;
  }
  return turn > 0;
}

// A message's header: it goes to the earliest receive posted for it, or waits unclaimed.
void Mailbox::header_arrived(Incoming& in) {
  wire::Header h = wire::read_header(in.header.data());
  h.bytes &= ~wire::kInSenderMemory;  // in.remote tells where its bytes are read from
  in.tag = h.tag;
  in.bytes = h.bytes;
  in.got = 0;
  in.state = Incoming::State::kPayload;
  const Envelope from{in.source, h.tag};
  if (const auto i = first_receive_for(posted_, from)) {
    // Moved, not copied: a count's update less per message.
    std::shared_ptr<Op> receive = std::move(posted_[*i]);
    posted_.erase(posted_.begin() + static_cast<std::ptrdiff_t>(*i));
    receive->set_source(in.source);
    if (const std::string wrong = mismatch(*receive, h.bytes, h.call, in.source); !wrong.empty()) {
      finish(*receive, wrong, Error::Code::kInvalid);
    } else {
      in.target = std::move(receive);
    }
  } else {
    auto u = std::make_shared<Unclaimed>();
    u->from = from;
    u->bytes = h.bytes;
    u->call = h.call;
    // Left where it is for a while (kParkFor): in its sender's memory, or a large one (kParkAbove)
    // on its connection or in its ring, read no further.
    const bool park = in.remote != 0 ? h.bytes > 0 : h.bytes > kParkAbove;
    if (park) {
      u->keep_after = Clock::now() + kParkFor;
      parked_.push_back(u);
      u->parked = &in;
      in.state = Incoming::State::kParked;
      wake();  // the loop keeps it when due, and may be asleep for longer
    } else if (h.bytes <= kUnexpectedBudget - std::min(unclaimed_bytes_, kUnexpectedBudget)) {
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
  if (in.remote != 0) {  // read from the sender's memory: its send may complete
    in.remote = 0;
    in.ring->acknowledge();
  }
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
  if (out.ring) {
    if (!out.hello_sent && out.socket.valid()) {
      if (out.hello.total() == 0) {
        wire::write_ring_hello(out.hello.header.data(), rank_, size_,
                               addresses_[static_cast<std::size_t>(out.peer)].key);
        out.hello.header_len = wire::kHelloBytes;
        (void)wire::write_ring_name(out.ring_name.data(), out.ring->name());  // create()'s: fits
        out.hello.data = out.ring_name.data();
        out.hello.data_len = out.ring_name.size();
      }
      const ssize_t n = net::send_some(out.socket.fd(), out.hello);
      if (n < 0 && !would_block(errno)) {
        drop_outgoing(out, connection_end(false));
        return;
      }
      out.hello_sent = out.hello.done();
    }
    write_ring(out);
    return;
  }
  for (;;) {
    if (!out.framing) {
      out.frame = net::Framed{};
      if (!out.hello_sent) {
        wire::write_hello(out.frame.header.data(), rank_, size_,
                          addresses_[static_cast<std::size_t>(out.peer)].key);
        out.frame.header_len = wire::kHelloBytes;
      } else if (!out.queue.empty()) {
        const Op& op = *out.queue.front();
        wire::write_header(out.frame.header.data(), {op.tag, op.bytes, op.call});
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
      if (!would_block(errno)) drop_outgoing(out, connection_end(false));
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

void Mailbox::read_back(Outgoing& out) {
  std::array<char, 64> bytes;
  for (;;) {
    const ssize_t n = ::recv(out.socket.fd(), bytes.data(), bytes.size(), MSG_DONTWAIT);
    if (n > 0) {
      out.ring_opened = true;  // a ring's first byte: the reader mapped the ring
      continue;
    }
    if (n < 0 && would_block(errno)) return;
    drop_outgoing(out, connection_end(n == 0));
    return;
  }
}

void Mailbox::open_watches() {
  const auto now = Clock::now();
  while (!watch_due_.empty() && watch_due_.front().at <= now) {
    const std::shared_ptr<Op> op = watch_due_.front().receive.lock();
    watch_due_.pop_front();
    if (!op || op->pending->done.load(std::memory_order_acquire)) continue;
    const auto p = static_cast<std::size_t>(op->peer);
    // Heard from meanwhile, or connected to by a send: that connection's end will tell.
    if (heard_from_[p] || outgoing_[p] || !gone_[p].why.empty()) continue;
    // No ring: its hello is sent now, and a ring's waits for its reader (the peer may never
    // read); this rank's sends to it go on the socket.
    outgoing_[p] = std::make_unique<Outgoing>();
    outgoing_[p]->peer = op->peer;
    outgoing_[p]->watches = true;
  }
}

void Mailbox::keep_parked() {
  std::erase_if(parked_, [](const auto& u) { return !u->keep_after; });  // claimed or dropped
  // No clock read without a parked message: this runs on every receive, and a read is a tenth
  // of an 8 B message's time.
  if (parked_.empty()) return;
  const auto now = Clock::now();
  for (const auto& u : parked_) {
    const bool blocks = std::any_of(posted_.begin(), posted_.end(), [&](const auto& op) {
      return op->peer == u->from.source || op->peer == kAnySource;
    });
    if (now < *u->keep_after && !blocks) continue;
    u->keep_after.reset();
    // Over the budget it stays parked, as a socket's message would (backpressure).
    if (u->bytes > kUnexpectedBudget - std::min(unclaimed_bytes_, kUnexpectedBudget)) continue;
    Incoming& in = *u->parked;
    u->parked = nullptr;
    u->data.resize(u->bytes);
    unclaimed_bytes_ += u->bytes;
    u->reading = &in;
    in.keep = u;
    in.state = Incoming::State::kPayload;
    wake();
  }
}

int Mailbox::park_sleep_ms(int ms) const {
  for (const auto& u : parked_) {
    if (!u->keep_after) continue;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(*u->keep_after - Clock::now());
    ms = static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, ms));
  }
  return ms;
}

int Mailbox::watch_sleep_ms(int ms) const {
  if (watch_due_.empty()) return ms;
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(watch_due_.front().at - Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, ms));
}

}  // namespace dtrain::runtime
