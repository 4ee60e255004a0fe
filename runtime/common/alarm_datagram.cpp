#include "common/alarm_datagram.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <vector>

namespace dtrain {
namespace {

constexpr std::string_view kAlarmKind = "dtrain-peer-lost 1";
// Longer than any host name DNS allows (253), so that a datagram is never refused for its size.
constexpr std::size_t kMaxHost = 255;

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

std::optional<Alarm> decode_alarm(std::string_view datagram, std::optional<std::uint64_t> token,
                                  int world_size) {
  const std::vector<std::string_view> f = lines(datagram);
  if (f.size() != 5 || f[0] != kAlarmKind) return std::nullopt;
  const auto sent = parse_hex16(f[1]);
  if (!sent || (token && *sent != *token)) return std::nullopt;
  const auto lost = parse_below(f[2], world_size);
  const auto reporter = parse_below(f[3], world_size);
  if (!lost || !reporter || !plain_host(f[4])) return std::nullopt;
  return Alarm{*lost, std::string(f[4]), *reporter};
}

std::string lost_peer_text(int lost, const std::string& host, int told_by) {
  const std::string how =
      told_by == lost
          // The rank's own alarm (Context::abort): it has printed its error and is ending.
          ? " left the job after an error, without finalizing (its own output says which)"
          : " was killed or exited without finalizing" +
                (told_by >= 0 ? " (seen by rank " + std::to_string(told_by) + " on that node)"
                              : std::string());
  return std::string(kLostPeerWords) + std::to_string(lost) + " (on " +
         (host.empty() ? std::string("this node") : host) + ")" + how;
}

std::optional<LostPeer> parse_lost_peer_text(std::string_view line) {
  const auto at = line.find(kLostPeerWords);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + kLostPeerWords.size());
  constexpr int kAnyRank = 1 << 30;  // a rank's digits; the job's size is not known here
  const auto digits = [](std::string_view s) {
    return s.substr(0, std::min(s.find_first_not_of("0123456789"), s.size()));
  };
  const std::string_view lost_text = digits(rest);
  const auto lost = parse_below(lost_text, kAnyRank);
  rest.remove_prefix(lost_text.size());
  constexpr std::string_view kOn = " (on ";
  if (!lost || !rest.starts_with(kOn)) return std::nullopt;
  rest.remove_prefix(kOn.size());
  const auto close = rest.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  LostPeer peer;
  peer.lost = *lost;
  const std::string_view host = rest.substr(0, close);
  if (host != "this node") {
    if (!plain_host(host)) return std::nullopt;
    peer.host = std::string(host);
  }
  rest.remove_prefix(close + 1);
  constexpr std::string_view kLeft = " left the job after an error";
  constexpr std::string_view kKilled = " was killed or exited without finalizing";
  constexpr std::string_view kSeen = " (seen by rank ";
  if (rest.starts_with(kLeft)) {
    peer.told_by = peer.lost;
    return peer;
  }
  if (!rest.starts_with(kKilled)) return std::nullopt;
  rest.remove_prefix(kKilled.size());
  if (rest.starts_with(kSeen)) {
    rest.remove_prefix(kSeen.size());
    const auto told_by = parse_below(digits(rest), kAnyRank);
    if (!told_by) return std::nullopt;
    peer.told_by = *told_by;
  }
  return peer;
}

}  // namespace dtrain
