// The bytes of point-to-point messages on a connection (mailbox.hpp), and the one message that
// names a size mismatch. Pure, so that the format is tested without sockets.
//   hello (once, from the sending rank): magic "DTP2", the sender's rank, the communicator's size,
//     the key the receiving rank published with its address (MailboxAddress: a connection of
//     another process, to a port the receiver took over after the rank it meant had exited, is
//     refused); or, between ranks of one node, magic "DTS2" and the same, then kRingNameBytes
//     naming the shared-memory ring (transport/shm/shm_ring.hpp) that carries the messages instead:
//     the connection then carries only wake-up bytes both ways, and its end tells that a peer is
//     gone
//   each message: its tag (int64), its size in bytes (uint64), the call header of the collective
//     that sent it (call_check.hpp: count and packed CallWhat; zeros for a user's message), so
//     that a receive of another call is told which, then the bytes
// Native byte order: both ends run the same build on the same kind of node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "comm/call_check.hpp"

namespace dtrain::runtime::wire {

inline constexpr std::size_t kHelloBytes = 20;
inline constexpr std::size_t kHeaderBytes = 32;
static_assert(kHelloBytes <= kHeaderBytes, "a hello is read into a header's buffer");
// Where a message is in its sender's memory (kInSenderMemory): its address, then 8 bytes unused.
inline constexpr std::size_t kWhereBytes = 16;
inline constexpr std::size_t kRingNameBytes = 64;  // NUL-padded

struct Header {
  std::int64_t tag = 0;
  std::uint64_t bytes = 0;
  CallHeader call;
};
// Through a ring only (transport/shm/shm_ring.hpp): a header whose size has this bit set is
// followed, instead of the bytes, by where they are in the sender's memory (kWhereBytes: its
// address, then 8 bytes unused), for the receiver to read them there and acknowledge.
inline constexpr std::uint64_t kInSenderMemory = std::uint64_t{1} << 63;

// `key`: the receiving rank's (MailboxAddress::key).
void write_hello(char* out, int rank, int size, std::uint64_t key);
// A hello whose kRingNameBytes follow it: write_ring_name.
void write_ring_hello(char* out, int rank, int size, std::uint64_t key);
// The sender's rank, or -1 when the bytes are no hello of a communicator of `size` ranks to the
// listener whose key is `key`.
int read_hello(const char* in, int size, std::uint64_t key);
// Whether a hello (read_hello's) announces a ring.
bool hello_has_ring(const char* in);
// `name` NUL-padded into `out` (kRingNameBytes); false when it does not fit.
bool write_ring_name(char* out, const std::string& name);
std::string read_ring_name(const char* in);
void write_header(char* out, const Header& h);
Header read_header(const char* in);

// "<receive>: rank 1 (on n1) sent 16 bytes; expected 8 (the receive's size): ..." for a receive
// described as `receive` (Mailbox::describe) that a message of `sent` bytes from `sender` matched.
std::string size_mismatch(const std::string& receive, std::uint64_t sent,
                          const std::string& sender);

}  // namespace dtrain::runtime::wire
