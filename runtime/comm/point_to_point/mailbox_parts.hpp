// The mailbox's inner parts (mailbox.hpp), shared by its two files: mailbox.cpp (the callers'
// side: posting, matching, deadlines) and mailbox_io.cpp (the loop's side: the sockets).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "comm/point_to_point/mailbox.hpp"
#include "comm/point_to_point/wire_format.hpp"
#include "comm/transport/shm/shm_ring.hpp"

namespace dtrain::runtime {

// Its Pending lives in it (`state`), shared with the waiter through the Op's own count: one
// allocation per message, not two (a small message's cost is in such steps: docs/benchmarks.md).
struct Mailbox::Op : std::enable_shared_from_this<Op> {
  // Provided, so that make_shared does not zero the whole Op before constructing it (every member
  // is initialized below): a `rep stos` that took two fifths of a receive's posting.
  Op() {}
  Pending state;
  Pending* const pending = &state;
  bool sends = false;
  char* buf = nullptr;
  std::size_t bytes = 0;
  int peer = kAnySource;  // the destination of a send, the source asked for by a receive
  std::int64_t tag = 0;
  CallHeader call;  // the collective's that sends or receives it (zeros: a user's message)
  Envelope envelope() const { return {peer, tag}; }
  std::shared_ptr<const std::vector<int>> group_of;  // its group's numbering (null: the world's)
  Timeout timeout{};  // its deadline's length and source, for the expiry's message
  // A receive's sender, in its group's numbering when it has one. Relaxed: its waiter reads it
  // after `done`, whose store (Mailbox::finish) comes after and publishes it.
  void set_source(int world_rank) const {
    pending->source.store(group_of ? (*group_of)[static_cast<std::size_t>(world_rank)] : world_rank,
                          std::memory_order_relaxed);
  }
};

// A message that arrived before any receive took it.
struct Mailbox::Unclaimed {
  Envelope from;
  std::uint64_t bytes = 0;
  CallHeader call;
  std::vector<char> data;       // its bytes, once kept (empty while parked)
  bool complete = false;        // every byte is in `data`
  Incoming* reading = nullptr;  // the connection still reading into `data`
  Incoming* parked = nullptr;   // the connection holding it, read no further until it is claimed
  // A message in its sender's memory, parked (Mailbox::kParkFor): read into `data` from then.
  std::optional<std::chrono::steady_clock::time_point> keep_after;
  Envelope envelope() const { return from; }
};

// A connection another rank opened to send to this one.
struct Mailbox::Incoming {
  enum class State { kHello, kRingName, kHeader, kWhere, kPayload, kParked };
  net::Socket socket;
  // Within a node: the ring the messages come through (the socket then brings wake-ups only).
  std::unique_ptr<ShmRing> ring;
  std::array<char, wire::kRingNameBytes> ring_name{};
  std::array<char, wire::kWhereBytes> where{};  // a message in the sender's memory: its address
  std::uint64_t remote = 0;  // that address, while its payload is read (0: from the stream)
  int source = -1;           // known after the hello
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
  // Opened for a receive (Mailbox::kWatchAfter), not a send: connected with nothing to send.
  bool watches = false;
  std::deque<std::shared_ptr<Op>> queue;  // front: being sent
  // Within a node: the ring the messages go through, made by the first send and written once
  // the connection has brought its name to the peer (write_ring says why not before); the
  // connection then brings wake-ups both ways.
  std::unique_ptr<ShmRing> ring;
  net::Framed hello;         // the ring's hello and name, on the socket
  bool ring_opened = false;  // the peer said it mapped the ring (so its name is gone)
  std::array<char, wire::kWhereBytes> where{};  // the front message's address (kInSenderMemory)
  std::uint64_t remote_sent = 0;  // messages sent as their address; the front one when awaiting
  bool awaiting = false;          // the front message waits for the reader's acknowledgement
  std::array<char, wire::kRingNameBytes> ring_name{};
};

}  // namespace dtrain::runtime
