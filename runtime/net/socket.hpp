// Blocking-with-deadline TCP helpers shared by the TCP store and the TCP communicator. Every call
// takes an absolute deadline and returns how it ended; the caller turns that into a message that
// names what it was doing and with whom, which these helpers cannot know. Plus the two UDP calls
// the peer alarm needs (comm/lost_peers/peer_alarm.hpp).
#pragma once

#include <netinet/in.h>
#include <sys/types.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace dtrain::runtime::net {

using Clock = std::chrono::steady_clock;

// Whether a non-blocking socket call failed only for now (nothing to read, no room to write, a
// signal): the caller waits for the descriptor and tries again.
inline bool would_block(int error) {
  return error == EAGAIN || error == EWOULDBLOCK || error == EINTR;
}

enum class IoResult { kOk, kTimeout, kClosed, kError, kMismatch };

// An owned file descriptor; closes on destruction.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept;
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();
  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Listens on `host:port` (port 0: any free port; host "" or "0.0.0.0": every interface). Throws
// Error (kSystem) naming the address and the cause.
Socket listen_on(const std::string& host, int port);
// The port a listening socket got.
int local_port(const Socket& s);
// Accepts one connection, waiting until `deadline`; an invalid Socket on timeout.
Socket accept_until(const Socket& listener, Clock::time_point deadline);
// Connects, retrying while nobody listens yet (the server may start later), until `deadline`.
// Throws Error (kTimeout) naming the address and the last cause.
Socket connect_until(const std::string& host, int port, Clock::time_point deadline,
                     const std::string& what);

// One attempt to connect, for a peer whose listener exists already (so a refusal means it is gone):
// an invalid Socket and `*how` (kClosed: refused; kTimeout; kError with errno) when it fails.
Socket connect_once(const std::string& host, int port, Clock::time_point deadline, IoResult* how);

// kMismatch: a message's header differed from the one expected (exchange()).
IoResult send_all(int fd, const void* data, std::size_t len, Clock::time_point deadline);
IoResult recv_all(int fd, void* data, std::size_t len, Clock::time_point deadline);

// One message with a small header in front (the TCP backend's call check, comm/call_check.hpp:
// the call each rank is in travels with its bytes), moved with one sendmsg or recvmsg per attempt
// however much of the header is left, so the header costs no system call of its own. `header`
// holds the bytes to send, or receives them.
struct Framed {
  static constexpr std::size_t kMaxHeader = 32;  // the mailbox's (wire_format.hpp)
  std::array<char, kMaxHeader> header{};
  std::size_t header_len = 0;
  char* data = nullptr;
  std::size_t data_len = 0;
  std::size_t moved = 0;  // of the header, then of the data

  std::size_t total() const { return header_len + data_len; }
  bool done() const { return moved == total(); }
  bool header_done() const { return moved >= header_len; }
};
// One attempt without waiting: the bytes moved (and `m.moved` advanced), 0 when the peer closed
// (a receive), -1 with errno (EAGAIN: nothing could move).
ssize_t send_some(int fd, Framed& m);
ssize_t recv_some(int fd, Framed& m);

// Sends `out` to `send_fd` while receiving `in` from `recv_fd` (the two may be the same socket;
// -1 with an empty message: that side is not taken): one ring step, without either side waiting
// on the other's buffer space. `expect`: when not null, the header `in` must bring
// (in.header_len bytes); another one ends the exchange with kMismatch as soon as it is read, with
// `in.header` holding it, before any wait for data the peer may never send. `failed_fd`
// receives the descriptor that failed.
IoResult exchange(int send_fd, Framed& out, int recv_fd, Framed& in, const void* expect,
                  Clock::time_point deadline, int* failed_fd);

// A non-blocking UDP socket bound to every interface on a free port (local_port() tells which).
// Throws Error (kSystem) naming the cause.
Socket bind_udp();
// `host`'s IPv4 address with `port`, for sendto(); nullopt when the name does not resolve. May
// wait for the name service: call it before the address is needed.
std::optional<sockaddr_in> resolve_udp(const std::string& host, int port);

// strerror(errno) of the last failure, for messages.
std::string last_error_text();

// gethostname(), "" if it fails.
std::string local_host_name();
// `host` as this machine connects to it: the loopback for this machine's own name when that name
// does not resolve here (a minimal image or chroot whose /etc/hosts lacks it: a local job ended
// with "cannot resolve vm:46647" so), else `host`. May wait for the name service.
std::string connectable(const std::string& host);

}  // namespace dtrain::runtime::net
