// One rank's line in the TCP backend's address table (tcp_peers.hpp), one definition for the rank
// that publishes it and the ranks that read it:
//   "host:port/mail-port/key node"
// where the rank listens for the collectives' connections and for its mailbox's
// (point_to_point/mailbox.hpp), the key every connection to either listener must bring in its
// hello (16 hexadecimal digits, net/random_token.hpp: a port reused by another process after this
// rank exited is not taken for this rank's), and its node (tests name several on one host).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dtrain::runtime {

struct PeerAddress {
  std::string host;
  int port = -1;
  int mail_port = -1;
  std::uint64_t key = 0;
  std::string node;
};

std::string format_peer_address(const PeerAddress& address);
// Nothing for a line that is not one: no host, a port outside 1-65535, a key that is not 16
// hexadecimal digits, no node.
std::optional<PeerAddress> parse_peer_address(std::string_view line);

}  // namespace dtrain::runtime
