#include "comm/peer_alarm.hpp"

#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <map>
#include <utility>

namespace dtrain::runtime {
namespace {

constexpr std::string_view kAlarmKind = "dtrain-peer-lost 1";
// Longer than any host name DNS allows (253), so that a datagram is never refused for its size.
constexpr std::size_t kMaxHost = 255;
// Larger than any valid datagram, so a longer one arrives cut and fails to decode.
constexpr std::size_t kMaxDatagram = 512;

std::string hex16(std::uint64_t v) {
  char text[17];
  for (int i = 15; i >= 0; --i) {
    text[i] = "0123456789abcdef"[v & 0xf];
    v >>= 4;
  }
  return std::string(text, 16);
}

std::optional<std::uint64_t> parse_hex16(std::string_view text) {
  if (text.size() != 16) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text) {
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    if (d < 0) return std::nullopt;
    v = (v << 4) | static_cast<std::uint64_t>(d);
  }
  return v;
}

// A whole decimal number below `limit`; no sign, no spaces.
std::optional<int> parse_below(std::string_view text, int limit) {
  int v = 0;
  if (text.empty() || text.size() > 9) return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0 || v >= limit) {
    return std::nullopt;
  }
  return v;
}

// Printable ASCII without spaces: any host name, and nothing that could move a terminal's cursor
// when the report is printed.
bool plain_host(std::string_view host) {
  return !host.empty() && host.size() <= kMaxHost &&
         std::all_of(host.begin(), host.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

// `text` cut at each '\n'.
std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (;;) {
    const auto end = text.find('\n');
    out.push_back(text.substr(0, end));
    if (end == std::string_view::npos) return out;
    text.remove_prefix(end + 1);
  }
}

}  // namespace

std::string encode_alarm_endpoint(const AlarmEndpoint& e) {
  std::string text = std::to_string(e.port) + "\n" + e.host;
  // A host cut short could name another machine: none at all, and nobody sends to this rank.
  if (text.size() >= kAlarmEndpointBytes) text = "0\n";
  text.resize(kAlarmEndpointBytes, '\0');
  return text;
}

AlarmEndpoint decode_alarm_endpoint(const char* record) {
  const std::string_view text(record, strnlen(record, kAlarmEndpointBytes));
  AlarmEndpoint e;
  const auto newline = text.find('\n');
  if (newline == std::string_view::npos) return e;
  const auto port = parse_below(text.substr(0, newline), 65536);
  const std::string_view host = text.substr(newline + 1);
  if (!port || !plain_host(host)) return e;
  e.port = *port;
  e.host = std::string(host);
  return e;
}

std::string encode_alarm(std::uint64_t token, const Alarm& alarm) {
  return std::string(kAlarmKind) + "\n" + hex16(token) + "\n" + std::to_string(alarm.lost) + "\n" +
         std::to_string(alarm.reporter) + "\n" + alarm.lost_host;
}

std::optional<Alarm> decode_alarm(std::string_view datagram, std::uint64_t token, int world_size) {
  const std::vector<std::string_view> f = lines(datagram);
  if (f.size() != 5 || f[0] != kAlarmKind || parse_hex16(f[1]) != token) return std::nullopt;
  const auto lost = parse_below(f[2], world_size);
  const auto reporter = parse_below(f[3], world_size);
  if (!lost || !reporter || !plain_host(f[4])) return std::nullopt;
  return Alarm{*lost, std::string(f[4]), *reporter};
}

std::uint64_t draw_alarm_token() {
  std::uint64_t token = 0;
  if (getrandom(&token, sizeof token, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof token)) {
    return token;
  }
  // No entropy yet (early boot) or no getrandom: the token only has to differ between jobs that
  // could reach each other's ports, and the clock and pid do that.
  const auto now = std::chrono::system_clock::now().time_since_epoch().count();
  return (static_cast<std::uint64_t>(now) * 0x9e3779b97f4a7c15ULL) ^
         static_cast<std::uint64_t>(getpid());
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
  char buf[kMaxDatagram];
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
