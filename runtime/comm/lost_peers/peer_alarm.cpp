#include "comm/lost_peers/peer_alarm.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <utility>

#include "common/number_text.hpp"

namespace dtrain::runtime {
namespace {

// Whether this process's Context took the logger's socket already: a second Context (after the
// first ended, its socket closed) must not take the same number, which may name another file by
// then.
std::atomic<bool> g_inherited_taken{false};

// The logger's socket named by kAlarmFdVariable (`fd_text`, Settings::alarm_fd), if it is one: an
// IPv4 datagram socket bound to a port. Anything else (not set, not a number, not open, another
// kind of file) gives nothing and a socket of this rank's own: the variable is the logger's, never
// a user's.
std::optional<net::Socket> inherited_socket(const std::optional<std::string>& fd_text) {
  if (!fd_text) return std::nullopt;
  const auto fd = parse_whole_number(*fd_text, 3, 1 << 20);
  if (!fd || g_inherited_taken.exchange(true)) return std::nullopt;
  const int n = static_cast<int>(*fd);
  int type = 0;
  socklen_t type_len = sizeof type;
  sockaddr_in bound{};
  socklen_t bound_len = sizeof bound;
  if (getsockopt(n, SOL_SOCKET, SO_TYPE, &type, &type_len) != 0 || type != SOCK_DGRAM ||
      getsockname(n, reinterpret_cast<sockaddr*>(&bound), &bound_len) != 0 ||
      bound.sin_family != AF_INET || bound.sin_port == 0) {
    return std::nullopt;
  }
  // Not for this rank's own children; nonblocking, as PeerAlarm::receive expects.
  (void)fcntl(n, F_SETFD, FD_CLOEXEC);
  (void)fcntl(n, F_SETFL, fcntl(n, F_GETFL) | O_NONBLOCK);
  return net::Socket(n);
}

}  // namespace

net::Socket alarm_socket(const std::optional<std::string>& fd_text) {
  if (auto inherited = inherited_socket(fd_text)) return std::move(*inherited);
  return net::bind_udp();
}

std::vector<int> alarm_targets(int world_size, const PeerProcess& self) {
  std::vector<int> out;
  for (int r = 0; r < world_size; ++r) {
    if (r != self.rank) out.push_back(r);
  }
  return out;
}

PeerAlarm::PeerAlarm(net::Socket socket, std::uint64_t token, int world_size,
                     const std::vector<AlarmEndpoint>& endpoints, const std::vector<int>& targets)
    : socket_(std::move(socket)), token_(token), world_size_(world_size) {
  std::map<std::string, std::optional<sockaddr_in>> resolved;
  for (int r : targets) {
    if (r < 0 || static_cast<std::size_t>(r) >= endpoints.size()) continue;
    const AlarmEndpoint& e = endpoints[static_cast<std::size_t>(r)];
    if (e.port <= 0) continue;
    auto at = resolved.find(e.host);
    if (at == resolved.end()) at = resolved.emplace(e.host, net::resolve_udp(e.host, 0)).first;
    if (!at->second) continue;
    sockaddr_in to = *at->second;
    to.sin_port = htons(static_cast<std::uint16_t>(e.port));
    destinations_.push_back(to);
  }
}

void PeerAlarm::send(const Alarm& alarm) const noexcept {
  try {
    const std::string datagram = encode_alarm(token_, alarm);
    for (const sockaddr_in& to : destinations_) {
      // Errors are dropped: a full buffer or an unreachable host is what the repeats are for.
      (void)::sendto(socket_.fd(), datagram.data(), datagram.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                     reinterpret_cast<const sockaddr*>(&to), sizeof to);
    }
  } catch (...) {
    // Out of memory for the datagram: the other nodes get only the launcher's banner.
  }
}

std::optional<Alarm> PeerAlarm::receive() const noexcept {
  char buf[kMaxAlarmDatagram];
  for (;;) {
    const ssize_t n = ::recv(socket_.fd(), buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;  // nothing more waiting
    try {
      if (auto alarm =
              decode_alarm(std::string_view(buf, static_cast<std::size_t>(n)), token_, world_size_))
        return alarm;
    } catch (...) {
      return std::nullopt;  // out of memory for the host name
    }
  }
}

}  // namespace dtrain::runtime
