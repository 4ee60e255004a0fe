// A rank's line in the TCP backend's address table: what one rank writes every other reads back,
// and a line that is not one is refused (its reader names it).
#include "comm/transport/tcp/peer_address.hpp"

#include <gtest/gtest.h>

namespace {

using dtrain::runtime::format_peer_address;
using dtrain::runtime::parse_peer_address;
using dtrain::runtime::PeerAddress;

TEST(PeerAddress, ALineReadsBackWhatWasWritten) {
  const PeerAddress a{"node-7.cluster", 40123, 40124, 0x0123456789abcdefULL, "node7"};
  const std::string line = format_peer_address(a);
  EXPECT_EQ(line, "node-7.cluster:40123/40124/0123456789abcdef node7");
  const auto b = parse_peer_address(line);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, a.host);
  EXPECT_EQ(b->port, a.port);
  EXPECT_EQ(b->mail_port, a.mail_port);
  EXPECT_EQ(b->key, a.key);
  EXPECT_EQ(b->node, a.node);
}

TEST(PeerAddress, AnIpv6HostKeepsItsColons) {
  const auto a = parse_peer_address("fe80::1:2:3/4/00000000000000ff n0");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "fe80::1:2");
  EXPECT_EQ(a->port, 3);
  EXPECT_EQ(a->mail_port, 4);
  EXPECT_EQ(a->key, 0xffu);
}

TEST(PeerAddress, ALineThatIsNotOneIsRefused) {
  for (const char* line :
       {"", "h:1/2/0000000000000000", "h:1/2/0000000000000000 ",  // no node
        ":1/2/0000000000000000 n",                                // no host
        "h:1/2 n",                       // the line of a build before the key
        "h:0/2/0000000000000000 n",      // port 0
        "h:1/65536/0000000000000000 n",  // past 65535
        "h:1/2/000000000000000 n",       // 15 digits
        "h:1/2/000000000000000x n", "h:-1/2/0000000000000000 n", "h1/2/0000000000000000 n"}) {
    EXPECT_EQ(parse_peer_address(line), std::nullopt) << '"' << line << '"';
  }
}

}  // namespace
