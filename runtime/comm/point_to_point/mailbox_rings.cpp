// The mailbox within a node (mailbox.hpp): messages through a shared-memory ring per pair and
// direction instead of a socket, the same bytes (wire_format.hpp) read by the same state machine
// (mailbox_io.cpp's read_stream), so that matching, sizes, deadlines and lost peers are the
// sockets'. Here: who reads and writes the rings, and when a sleeping side is woken.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "comm/point_to_point/mailbox.hpp"
#include "comm/point_to_point/mailbox_parts.hpp"

namespace dtrain::runtime {
namespace {

// One byte on a ring's connection wakes the peer's poll. When the socket's buffer is full the
// peer has bytes to read already, so a send that fails loses nothing.
void wake_peer(const net::Socket& s) {
  if (!s.valid()) return;
  const char byte = 1;
  (void)::send(s.fd(), &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace

bool Mailbox::same_node(int rank) const {
  const auto r = static_cast<std::size_t>(rank);
  const auto me = static_cast<std::size_t>(rank_);
  return r < addresses_.size() && me < addresses_.size() && !addresses_[me].node.empty() &&
         addresses_[r].node == addresses_[me].node;
}

bool Mailbox::open_ring(Incoming& in) {
  try {
    in.ring = std::make_unique<ShmRing>(ShmRing::open(wire::read_ring_name(in.ring_name.data())));
  } catch (const Error& e) {
    drop_incoming(in,
                  std::string("sent through shared memory this rank could not map: ") + e.what());
    return false;
  }
  if (flags_up_ && in.ring->reader_waits(true)) flags_raised_at_ = std::chrono::steady_clock::now();
  wake_peer(in.socket);  // tells the writer the ring is mapped (and its name removed)
  return true;
}

bool Mailbox::read_ring(Incoming& in) {
  if (!in.ring || !in.socket.valid()) return false;
  bool moved = false;
  while (take_whole(in)) moved = true;
  // What take_whole leaves (a message nobody waits for yet, a larger one, one that fails) or
  // a message begun: read_stream's.
  if (in.state != Incoming::State::kHeader || in.header_got != 0 || !in.ring->empty())
    moved = read_stream(in) || moved;
  if (moved && in.ring && in.ring->take_writer_waiting()) wake_peer(in.socket);
  return moved;
}

bool Mailbox::take_whole(Incoming& in) {
  if (in.state != Incoming::State::kHeader || in.header_got != 0) return false;
  std::size_t length = 0;
  const char* record = in.ring->peek(length);
  if (record == nullptr || length < wire::kHeaderBytes) return false;
  const wire::Header h = wire::read_header(record);
  // Its bytes all in this record (a size with kInSenderMemory never is: its address follows).
  if (h.bytes != length - wire::kHeaderBytes) return false;
  const auto i = first_receive_for(posted_, {in.source, h.tag});
  if (!i) return false;
  Op& receive = *posted_[*i];
  if (h.call != receive.call || h.bytes != receive.bytes) return false;  // named by read_stream
  if (h.bytes > 0) std::memcpy(receive.buf, record + wire::kHeaderBytes, h.bytes);
  in.ring->skip(length);
  receive.set_source(in.source);
  // Kept, not released: the Op's last owner is usually its waiter, which would free it on the way
  // to its next send; the next receive's posting frees it instead (retired_).
  retired_ = std::move(posted_[*i]);
  if (*i == 0) {
    posted_.pop_front();
  } else {
    posted_.erase(posted_.begin() + static_cast<std::ptrdiff_t>(*i));
  }
  finish(*retired_, "");
  return true;
}

bool Mailbox::write_ring(Outgoing& out) {
  // Nothing goes into a ring before its connection is made and its hello sent: a send completes
  // once its bytes are in the ring, and so it must fail, as on a socket, when the reader is gone
  // before the connection (its listener refuses it: drop_outgoing names it). Written before,
  // a send to a rank killed earlier "completed" and a survivor's alltoallv named the wrong rank
  // (docs/benchmarks.md). The first message to a peer waits for the connection, as on a socket.
  if (!out.hello_sent) return false;
  bool moved = false;
  while (out.ring) {
    if (out.awaiting) {  // the reader reads the front message from this process's memory
      if (!complete_taken(out)) break;
      moved = true;
      continue;
    }
    if (!out.framing) {
      if (out.queue.empty()) break;
      const Op& op = *out.queue.front();
      out.frame = net::Framed{};
      // Larger than the ring, and fewer cores than ranks: one copy by the reader instead of two
      // through the ring (cores_for_all_ says why not always).
      const bool remote = !cores_for_all_ && op.bytes > ShmRing::kBytes && out.ring->remote_reads();
      wire::write_header(out.frame.header.data(),
                         {op.tag, op.bytes | (remote ? wire::kInSenderMemory : 0), op.call});
      out.frame.header_len = wire::kHeaderBytes;
      if (remote) {
        const std::uint64_t address = reinterpret_cast<std::uintptr_t>(op.buf);
        out.where.fill(0);
        std::memcpy(out.where.data(), &address, sizeof address);
        out.frame.data = out.where.data();
        out.frame.data_len = out.where.size();
      } else {
        out.frame.data = op.buf;
        out.frame.data_len = op.bytes;
      }
      out.framing = true;
    }
    net::Framed& f = out.frame;
    std::size_t n = 0;
    if (f.moved == 0 && out.ring->write_both(f.header.data(), f.header_len, f.data, f.data_len)) {
      n = f.total();  // a message that fits whole: its reader finds it whole at its first look
    } else {
      n = f.header_done() ? out.ring->write(f.data + (f.moved - f.header_len), f.total() - f.moved)
                          : out.ring->write(f.header.data() + f.moved, f.header_len - f.moved);
    }
    f.moved += n;
    moved = moved || n > 0;
    if (!f.done()) {
      if (n == 0) break;  // full: the reader makes room
      continue;
    }
    out.framing = false;
    if (out.frame.data == out.where.data()) {
      ++out.remote_sent;
      out.awaiting = true;
      continue;
    }
    finish(*out.queue.front(), "");
    out.queue.pop_front();
  }
  // Before the hello the reader has not seen the ring, and reads it whole once it does.
  if (moved && out.hello_sent && out.ring->take_reader_waiting()) wake_peer(out.socket);
  return moved;
}

bool Mailbox::send_now(Outgoing& out, const void* buf, std::size_t bytes, std::int64_t tag,
                       const CallHeader& call) {
  // Larger than the ring: streamed through it, or read from this process's memory (write_ring).
  if (!out.ring || !out.hello_sent || out.framing || !out.queue.empty() || bytes > ShmRing::kBytes)
    return false;
  std::array<char, wire::kHeaderBytes> header;
  wire::write_header(header.data(), {tag, bytes, call});
  if (!out.ring->write_both(header.data(), header.size(), static_cast<const char*>(buf), bytes))
    return false;
  if (out.ring->take_reader_waiting()) wake_peer(out.socket);
  return true;
}

bool Mailbox::complete_taken(Outgoing& out) {
  if (!out.ring || !out.awaiting || out.ring->acknowledged() < out.remote_sent) return false;
  out.awaiting = false;
  finish(*out.queue.front(), "");
  out.queue.pop_front();
  return true;
}

bool Mailbox::move_rings() {
  bool moved = false;
  bool streaming = false;
  // Sends first: an acknowledgement completes a send at once, while reading a large message
  // takes a while (and the caller whose send completes may be about to post its receive).
  for (Outgoing* out : ring_writers_) {
    if (!out->ring || out->queue.empty()) continue;
    moved = write_ring(*out) || moved;
    // Begun, and through the ring (not its address for the reader to copy alone).
    streaming =
        streaming || (out->framing && out->frame.moved > 0 && out->frame.data != out->where.data());
  }
  for (const auto& in : incoming_) {
    if (!in->ring || in->state == Incoming::State::kParked) continue;
    moved = read_ring(*in) || moved;
    streaming =
        streaming || (in->state == Incoming::State::kPayload && in->remote == 0 && in->got > 0);
  }
  // Stored only when it changes: a small message's steps then write no shared line.
  if (streaming_.load(std::memory_order_relaxed) != streaming)
    streaming_.store(streaming, std::memory_order_relaxed);
  return moved;
}

bool Mailbox::mid_message() const {
  // Where ranks outnumber cores a longer spin would take the core from the peer it waits for.
  return cores_for_all_ && streaming_.load(std::memory_order_relaxed);
}

void Mailbox::raise_flags() {
  flags_up_ = true;
  bool raised = false;
  for (const auto& in : incoming_) {
    if (in->ring) raised = in->ring->reader_waits(true) || raised;
  }
  for (Outgoing* out : ring_writers_) {
    if (out->ring && !out->queue.empty()) raised = out->ring->writer_waits(true) || raised;
  }
  // A peer that wrote as a flag went up may not have seen it (shm_ring.hpp): the loop looks again
  // ShmRing::kRecheckAfter from now (ring_sleep_ms).
  if (raised) flags_raised_at_ = std::chrono::steady_clock::now();
  move_rings();  // after the flags are up: what came before them is not left waiting
}

void Mailbox::lower_flags() {
  flags_up_ = false;
  for (const auto& in : incoming_) {
    if (in->ring) in->ring->reader_waits(false);
  }
  for (Outgoing* out : ring_writers_) {
    if (out->ring) out->ring->writer_waits(false);
  }
}

int Mailbox::ring_sleep_ms() {
  constexpr int kIdle = 1000;  // the loop's poll, as without rings
  const bool any = std::any_of(incoming_.begin(), incoming_.end(),
                               [](const auto& in) { return in->ring != nullptr; }) ||
                   std::any_of(ring_writers_.begin(), ring_writers_.end(),
                               [](const Outgoing* o) { return o->ring != nullptr; });
  if (!any) return kIdle;
  if (watchers_ > 0) return 1;  // they read; this thread looks again when they stop
  // The count's last move seen, and when: the flags stay down for a millisecond after it. (Not
  // "until the count stops between two looks": the loop looks again at once when woken, and
  // raised the flags between two messages; a 256 KiB ping-pong took 10 % longer.)
  const auto now = std::chrono::steady_clock::now();
  if (const std::uint64_t count = watched_count_.load(std::memory_order_relaxed);
      count != watched_seen_) {
    watched_seen_ = count;
    watched_at_ = now;
  }
  if (!flags_up_ && now - watched_at_ < std::chrono::milliseconds(1)) {
    move_rings();  // nobody wakes this thread meanwhile: it looks each millisecond
    return 1;
  }
  raise_flags();
  for (const auto& in : incoming_) {
    // Bytes in the ring, or a message still read from its sender's memory.
    if (in->ring && in->socket.valid() && in->state != Incoming::State::kParked &&
        (!in->ring->empty() || in->remote != 0)) {
      return 0;
    }
  }
  for (const Outgoing* out : ring_writers_) {
    if (out->ring && out->hello_sent && !out->queue.empty() && !out->awaiting &&
        !out->ring->full()) {
      return 0;
    }
  }
  // The look a raised flag owes its rings (shm_ring.hpp).
  const int recheck = ShmRing::recheck_sleep_ms(flags_raised_at_, now);
  return recheck >= 0 ? recheck : kIdle;
}

// A caller waiting for a message reads the rings itself while it spins (engine.hpp), and the
// peers need not wake this mailbox's thread meanwhile: the flags stay down while callers spin,
// and a while after (watched_count_) when their messages completed; a caller that goes to sleep
// raises them at once.
void Mailbox::begin() {
  // A burst's later calls find the flags down: no lock (the members' comment says why it is safe).
  if (watchers_.fetch_add(1) > 0 || !flags_up_.load()) return;
  std::lock_guard lock(mutex_);
  if (!flags_up_) return;
  lower_flags();
  // The thread may be asleep for long, relying on the flags: it now looks each millisecond
  // instead, until the callers have stopped (once per burst of calls, not per message).
  if (thread_.joinable()) wake();
}

bool Mailbox::step() {
  std::lock_guard lock(mutex_);
  return move_rings();
}

void Mailbox::end(bool done) {
  if (done) {
    // A load and a store, not an add: a locked instruction here waits for this rank's stores to
    // leave its core, on the way to its next send. Two callers that race may count one between
    // them: the count still moves, which is all the loop looks for.
    watched_count_.store(watched_count_.load(std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
    watchers_.fetch_sub(1);
    return;
  }
  std::lock_guard lock(mutex_);
  if (watchers_.fetch_sub(1) > 1) return;
  raise_flags();
}

}  // namespace dtrain::runtime
