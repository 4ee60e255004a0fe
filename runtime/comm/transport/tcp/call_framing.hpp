// The TCP backend's messages as they travel: each call's CallHeader (call_check.hpp) in front of
// its bytes, as net::Framed, so that the communicator's exchanges and the hierarchy's link
// (tcp_peer_transport.hpp) frame and read them alike. And the broadcast tree's peers, which the
// communicator walks with such messages. Pure.
#pragma once

#include <cstddef>
#include <vector>

#include "comm/call_check.hpp"
#include "net/socket.hpp"

namespace dtrain::runtime {

// A message of `bytes` from `data` with `call` in front.
net::Framed outgoing(const CallHeader& call, const void* data, std::size_t bytes);
// Room for a message of `bytes` into `data` with a header in front.
net::Framed incoming(void* data, std::size_t bytes);
// The header a received message brought (once header_done()).
CallHeader header_of(const net::Framed& message);

// A binomial broadcast tree over `size` ranks from `root`, as `rank` sees it: its parent first
// (none at the root), then its children. log2(p) rounds, each rank connected to its parent and
// children only (the root used to send to every rank: p - 1 connections and p - 1 messages).
std::vector<int> broadcast_tree(int rank, int root, int size);

}  // namespace dtrain::runtime
