// Telling the ranks on other nodes that a rank was lost, before the launcher kills them.
//
// Only the ranks on a lost rank's node can see its process end (PeerWatch, peer_watch.hpp), and
// the launcher kills every rank about a second later; MPI tells the others nothing in that second
// (measured: peer_watch.hpp). So each rank binds a UDP socket at init, the ranks exchange their
// host names and ports (through MPI) and a token drawn by rank 0, and a rank that reports a loss
// sends one datagram to every rank that cannot see that process itself. The datagram carries the
// token, so a datagram of another job (or anything else that reaches the port) is ignored. UDP,
// not TCP: nothing is connected or kept open for a message that is sent at most once, a send
// never waits, and a receiver needs only one descriptor in its watch's poll set. A datagram can
// be lost, so it is sent a few times (PeerWatch); a rank whose host name does not resolve, or
// which could not bind its socket, cannot be told and gets only the launcher's banner.
#pragma once

#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "comm/lost_peers/peer_watch.hpp"
#include "common/alarm_datagram.hpp"
#include "net/socket.hpp"

namespace dtrain::runtime {

// The datagram and the endpoint records (common/alarm_datagram.hpp), by their names here.
using dtrain::Alarm;
using dtrain::AlarmEndpoint;
using dtrain::decode_alarm;
using dtrain::decode_alarm_endpoint;
using dtrain::encode_alarm;
using dtrain::encode_alarm_endpoint;
using dtrain::kAlarmEndpointBytes;

// This rank's alarm socket: the one its logger handed it (kAlarmFdVariable: a bound IPv4 UDP
// socket, taken once per process), so that an alarm reaching this rank after it ended still
// reaches its logger; else a new one (net::bind_udp). Throws Error as bind_udp.
net::Socket alarm_socket(const std::optional<std::string>& fd_text);

// The ranks an alarm from `self` must reach: every rank of a job of `world_size` but `self`. The
// ranks that watch the same processes hear it too: by the time their own watch wakes, the rank
// that sent the alarm may have ended as well (its collective failed), and the alarm says which
// rank ended first (measured: under load, ranks of one node named the sender instead).
std::vector<int> alarm_targets(int world_size, const PeerProcess& self);

// This rank's side of the alarm: its socket, and where to send.
class PeerAlarm {
 public:
  // `socket`: from net::bind_udp(). `endpoints`: every rank's, indexed by rank. Resolves the hosts
  // of `targets` now (once per host; the name service may be slow), so that sending never waits;
  // a target whose host does not resolve is left out.
  PeerAlarm(net::Socket socket, std::uint64_t token, int world_size,
            const std::vector<AlarmEndpoint>& endpoints, const std::vector<int>& targets);

  // Readable when a datagram has arrived.
  int fd() const { return socket_.fd(); }
  // How many ranks send() reaches (for tests).
  std::size_t reachable() const { return destinations_.size(); }
  // One datagram to each reachable target, without waiting: one that the kernel cannot take at
  // once is dropped (the caller sends again).
  void send(const Alarm& alarm) const noexcept;
  // Reads every datagram waiting and returns the first valid alarm among them, if any.
  std::optional<Alarm> receive() const noexcept;

 private:
  net::Socket socket_;
  std::uint64_t token_;
  int world_size_;
  std::vector<sockaddr_in> destinations_;
};

}  // namespace dtrain::runtime
