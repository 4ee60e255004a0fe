// The bytes of point-to-point messages on a connection (mailbox.hpp), and the one message that
// names a size mismatch. Pure, so that the format is tested without sockets.
//   hello (once, from the sending rank): magic "DTP2", the sender's rank, the communicator's size
//   each message: its tag (int64), then its size in bytes (uint64), then the bytes
// Native byte order: both ends run the same build on the same kind of node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dtrain::runtime::wire {

inline constexpr std::size_t kHelloBytes = 12;
inline constexpr std::size_t kHeaderBytes = 16;

struct Header {
  std::int64_t tag = 0;
  std::uint64_t bytes = 0;
};

void write_hello(char* out, int rank, int size);
// The sender's rank, or -1 when the bytes are no hello of a communicator of `size` ranks.
int read_hello(const char* in, int size);
void write_header(char* out, const Header& h);
Header read_header(const char* in);

// "<receive>: rank 1 (on n1) sent 16 bytes; expected 8 (the receive's size): ..." for a receive
// described as `receive` (Mailbox::describe) that a message of `sent` bytes from `sender` matched.
std::string size_mismatch(const std::string& receive, std::uint64_t sent,
                          const std::string& sender);

}  // namespace dtrain::runtime::wire
