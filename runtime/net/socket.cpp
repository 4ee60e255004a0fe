// POSIX sockets with poll() deadlines. Sockets are non-blocking so that no call can outlive its
// deadline; TCP_NODELAY because collectives send latency-bound small messages.
#include "net/socket.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime::net {
namespace {

int remaining_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return left > 1000 ? 1000 : static_cast<int>(left);  // wake up at least once a second
}

void tune(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// getaddrinfo's return code; `*out` to be freed by the caller when it is 0.
int lookup(const std::string& host, int port, int socktype, bool passive, addrinfo** out) {
  addrinfo hints{};
  hints.ai_family = AF_INET;  // IPv4: what MASTER_ADDR holds in every launcher we support
  hints.ai_socktype = socktype;
  if (passive) hints.ai_flags = AI_PASSIVE;
  const std::string service = std::to_string(port);
  const char* node = (host.empty() || host == "0.0.0.0") ? nullptr : host.c_str();
  return ::getaddrinfo(node, service.c_str(), &hints, out);
}

addrinfo* resolve(const std::string& host, int port, bool passive) {
  addrinfo* out = nullptr;
  const int rc = lookup(host, port, SOCK_STREAM, passive, &out);
  if (rc != 0) {
    throw Error(Error::Code::kSystem, "dtrain: net: cannot resolve " + host + ":" +
                                          std::to_string(port) + ": " + ::gai_strerror(rc));
  }
  return out;
}

}  // namespace

Socket::Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}
Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

std::string last_error_text() { return std::strerror(errno); }

std::string local_host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

std::string connectable(const std::string& host) {
  if (host.empty() || host != local_host_name()) return host;
  addrinfo* ai = nullptr;
  if (lookup(host, 0, SOCK_STREAM, false, &ai) != 0) return "127.0.0.1";
  ::freeaddrinfo(ai);
  return host;
}

Socket listen_on(const std::string& host, int port) {
  addrinfo* ai = resolve(host, port, true);
  Socket s(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0));
  const int one = 1;
  if (s.valid()) ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // SOMAXCONN (the kernel's cap, 4096 on current kernels): the TCP store's listener takes every
  // rank's connection at once at start-up, and with a backlog of 128 a job of 1,024 ranks lost
  // SYNs, each retried a second later.
  const bool ok = s.valid() && ::bind(s.fd(), ai->ai_addr, ai->ai_addrlen) == 0 &&
                  ::listen(s.fd(), SOMAXCONN) == 0;
  const std::string why = ok ? "" : last_error_text();
  ::freeaddrinfo(ai);
  if (!ok) {
    throw Error(Error::Code::kSystem, "dtrain: net: cannot listen on " +
                                          (host.empty() ? std::string("*") : host) + ":" +
                                          std::to_string(port) + ": " + why);
  }
  ::fcntl(s.fd(), F_SETFL, ::fcntl(s.fd(), F_GETFL) | O_NONBLOCK);
  return s;
}

Socket bind_udp() {
  Socket s(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  any.sin_port = 0;
  if (!s.valid() || ::bind(s.fd(), reinterpret_cast<const sockaddr*>(&any), sizeof any) != 0) {
    throw Error(Error::Code::kSystem,
                "dtrain: net: cannot bind a UDP socket: " + last_error_text());
  }
  return s;
}

std::optional<sockaddr_in> resolve_udp(const std::string& host, int port) {
  if (host.empty()) return std::nullopt;  // would mean this host's every interface
  addrinfo* ai = nullptr;
  if (lookup(host, port, SOCK_DGRAM, false, &ai) != 0) return std::nullopt;
  std::optional<sockaddr_in> out;
  if (ai->ai_family == AF_INET && ai->ai_addrlen == sizeof(sockaddr_in)) {
    out.emplace();
    std::memcpy(&*out, ai->ai_addr, sizeof(sockaddr_in));
  }
  ::freeaddrinfo(ai);
  return out;
}

int local_port(const Socket& s) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  return ntohs(addr.sin_port);
}

Socket accept_until(const Socket& listener, Clock::time_point deadline) {
  for (;;) {
    const int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      tune(fd);
      return Socket(fd);
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return Socket();
    if (Clock::now() >= deadline) return Socket();
    pollfd p{listener.fd(), POLLIN, 0};
    ::poll(&p, 1, remaining_ms(deadline));
  }
}

Socket connect_until(const std::string& host, int port, Clock::time_point deadline,
                     const std::string& what) {
  std::string why = "no attempt made";
  auto pause = std::chrono::milliseconds(10);
  while (true) {
    addrinfo* ai = resolve(host, port, false);
    Socket s(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0));
    const bool ok = s.valid() && ::connect(s.fd(), ai->ai_addr, ai->ai_addrlen) == 0;
    if (!ok) why = last_error_text();
    ::freeaddrinfo(ai);
    if (ok) {
      tune(s.fd());
      return s;
    }
    if (Clock::now() + pause >= deadline) break;
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(200)) pause *= 2;
  }
  throw Error(Error::Code::kTimeout, "dtrain: " + what + ": cannot connect to " + host + ":" +
                                         std::to_string(port) + " before the deadline: " + why);
}

Socket connect_once(const std::string& host, int port, Clock::time_point deadline, IoResult* how) {
  addrinfo* ai = resolve(host, port, false);
  Socket s(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  int rc = s.valid() ? ::connect(s.fd(), ai->ai_addr, ai->ai_addrlen) : -1;
  int error = rc == 0 ? 0 : errno;
  ::freeaddrinfo(ai);
  if (rc != 0 && s.valid() && error == EINPROGRESS) {
    // Across nodes the handshake takes a round trip; on a listener whose backlog is full the
    // kernel retries the SYN: wait for either, up to the deadline.
    pollfd p{s.fd(), POLLOUT, 0};
    while ((rc = ::poll(&p, 1, remaining_ms(deadline))) == 0 && Clock::now() < deadline) {
    }
    socklen_t len = sizeof error;
    error = ETIMEDOUT;
    if (rc == 1 && ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &error, &len) != 0) error = errno;
    rc = error == 0 ? 0 : -1;
  }
  if (rc != 0) {
    errno = error;
    *how = error == ETIMEDOUT                               ? IoResult::kTimeout
           : (error == ECONNREFUSED || error == ECONNRESET) ? IoResult::kClosed
                                                            : IoResult::kError;
    return Socket();
  }
  tune(s.fd());
  *how = IoResult::kOk;
  return s;
}

namespace {

// The parts of `m` still to move: what is left of the header, then of the data.
int parts_left(Framed& m, iovec (&iov)[2]) {
  int n = 0;
  if (m.moved < m.header_len) iov[n++] = {m.header.data() + m.moved, m.header_len - m.moved};
  const std::size_t data_moved = m.moved > m.header_len ? m.moved - m.header_len : 0;
  if (data_moved < m.data_len) iov[n++] = {m.data + data_moved, m.data_len - data_moved};
  return n;
}

}  // namespace

ssize_t send_some(int fd, Framed& m) {
  iovec iov[2];
  msghdr h{};
  h.msg_iov = iov;
  h.msg_iovlen = static_cast<std::size_t>(parts_left(m, iov));
  const ssize_t n = ::sendmsg(fd, &h, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n > 0) m.moved += static_cast<std::size_t>(n);
  return n;
}

ssize_t recv_some(int fd, Framed& m) {
  iovec iov[2];
  msghdr h{};
  h.msg_iov = iov;
  h.msg_iovlen = static_cast<std::size_t>(parts_left(m, iov));
  const ssize_t n = ::recvmsg(fd, &h, MSG_DONTWAIT);
  if (n > 0) m.moved += static_cast<std::size_t>(n);
  return n;
}

IoResult exchange(int send_fd, Framed& out, int recv_fd, Framed& in, const void* expect,
                  Clock::time_point deadline, int* failed_fd) {
  bool checked = expect == nullptr;
  while (!out.done() || !in.done()) {
    // Try both directions first: poll only when neither can move.
    bool progress = false;
    if (!out.done()) {
      const ssize_t n = send_some(send_fd, out);
      if (n > 0) {
        progress = true;
      } else if (n < 0 && !would_block(errno)) {
        if (failed_fd) *failed_fd = send_fd;
        return (errno == EPIPE || errno == ECONNRESET) ? IoResult::kClosed : IoResult::kError;
      }
    }
    if (!in.done()) {
      const ssize_t n = recv_some(recv_fd, in);
      if (n > 0) {
        progress = true;
      } else if (n == 0) {
        if (failed_fd) *failed_fd = recv_fd;
        return IoResult::kClosed;
      } else if (!would_block(errno)) {
        if (failed_fd) *failed_fd = recv_fd;
        return errno == ECONNRESET ? IoResult::kClosed : IoResult::kError;
      }
      if (!checked && in.header_done()) {
        checked = true;
        if (std::memcmp(in.header.data(), expect, in.header_len) != 0) {
          if (failed_fd) *failed_fd = recv_fd;
          return IoResult::kMismatch;
        }
      }
    }
    if (progress) continue;
    if (Clock::now() >= deadline) {
      if (failed_fd) *failed_fd = in.done() ? send_fd : recv_fd;
      return IoResult::kTimeout;
    }
    pollfd p[2];
    nfds_t np = 0;
    if (!out.done()) p[np++] = {send_fd, POLLOUT, 0};
    if (!in.done()) p[np++] = {recv_fd, POLLIN, 0};
    ::poll(p, np, remaining_ms(deadline));
  }
  return IoResult::kOk;
}

IoResult send_all(int fd, const void* data, std::size_t len, Clock::time_point deadline) {
  Framed out{.data = static_cast<char*>(const_cast<void*>(data)), .data_len = len};
  Framed none;
  return exchange(fd, out, fd, none, nullptr, deadline, nullptr);
}

IoResult recv_all(int fd, void* data, std::size_t len, Clock::time_point deadline) {
  Framed none;
  Framed in{.data = static_cast<char*>(data), .data_len = len};
  return exchange(fd, none, fd, in, nullptr, deadline, nullptr);
}

}  // namespace dtrain::runtime::net
