// The peer alarms of a pretend job whose ranks all listen on this machine's loopback interface,
// under the host name "localhost", for the peer alarm and peer watch tests.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "comm/lost_peers/peer_alarm.hpp"
#include "net/socket.hpp"

namespace dtrain::test {

class LoopbackJob {
 public:
  LoopbackJob(int size, std::uint64_t token) : token_(token) {
    for (int r = 0; r < size; ++r) {
      sockets_.push_back(runtime::net::bind_udp());
      endpoints_.push_back({"localhost", runtime::net::local_port(sockets_.back())});
    }
  }
  int size() const { return static_cast<int>(sockets_.size()); }
  std::uint64_t token() const { return token_; }
  const std::vector<runtime::AlarmEndpoint>& endpoints() const { return endpoints_; }

  // Rank `rank`'s alarm, telling `targets`; takes the rank's socket (once).
  std::unique_ptr<runtime::PeerAlarm> alarm(int rank, const std::vector<int>& targets) {
    return std::make_unique<runtime::PeerAlarm>(std::move(sockets_.at(rank)), token_, size(),
                                                endpoints_, targets);
  }

  // Sends `datagram` to rank `rank` from a socket of no rank (another job, or junk).
  void send_raw(int rank, std::string_view datagram) const {
    const runtime::net::Socket from = runtime::net::bind_udp();
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(static_cast<std::uint16_t>(endpoints_.at(rank).port));
    (void)::sendto(from.fd(), datagram.data(), datagram.size(), 0,
                   reinterpret_cast<const sockaddr*>(&to), sizeof to);
  }

 private:
  std::uint64_t token_;
  std::vector<runtime::net::Socket> sockets_;
  std::vector<runtime::AlarmEndpoint> endpoints_;
};

}  // namespace dtrain::test
