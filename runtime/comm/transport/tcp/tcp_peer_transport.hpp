// The hierarchical collectives' link between nodes over the TCP backend's data connections
// (comm/algorithms/hierarchy.hpp), for torchrun-style jobs that have no MPI. Each peer's sends
// and receives queue in the order they were posted and move, without blocking, whenever the
// allreduce tests for completion; between tests the kernel's socket buffers keep the link busy,
// so the node's shared-memory work overlaps the transfer. A connection that closes or fails while
// a message still needs it goes to the communicator's diagnosis (tcp_loss.hpp), which names the
// rank really lost. Each message carries the call it belongs to (call_check.hpp) in front of its
// bytes, so that nodes whose ranks passed different calls say so instead of reading each other's
// pieces as their own.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <deque>
#include <functional>
#include <vector>

#include "comm/algorithms/hierarchy.hpp"
#include "comm/call_check.hpp"
#include "net/socket.hpp"

namespace dtrain::runtime {

class TcpPeerTransport final : public PeerTransport {
 public:
  // Called with the peer whose connection failed, how and errno; it must throw.
  using Fail = std::function<void(int peer, net::IoResult how, int error)>;
  // Called with the peer whose message carried another call than `call`; it must throw.
  using Mismatch = std::function<void(int peer, const CallHeader& theirs)>;

  // `fd_of_rank[r]`: the nonblocking data connection to rank r (-1: none); the descriptors must
  // stay open while messages are queued. `call`: the running call's header, read as each message
  // is queued and received (the communicator sets it before each call); it must outlive this.
  TcpPeerTransport(std::vector<int> fd_of_rank, Fail fail, const CallHeader& call,
                   Mismatch mismatch);

  void send(int slot, const void* buf, std::size_t bytes, int peer) override;
  void recv(int slot, void* buf, std::size_t bytes, int peer) override;
  bool done(int slot) override;
  std::vector<int> waiting(int slot) const override;
  // Moves what the sockets take or hold now, for every slot.
  void progress() override;

 private:
  struct Message {
    int slot;
    net::Framed bytes;  // the call's header, then the piece
  };
  struct Queues {
    std::deque<Message> out;
    std::deque<Message> in;
  };
  // Checks `peer`, and marks it active: a message is about to be queued.
  Queues& queues_of(int peer);
  void transmit(int peer);
  void receive(int peer);
  // Moves the front messages of one direction with `io` (net::send_some or recv_some) until the
  // socket would block; a received header is checked as soon as it is complete.
  void move(int peer, std::deque<Message>& messages, ssize_t (*io)(int, net::Framed&));
  void complete(std::deque<Message>& messages);

  std::vector<int> fds_;
  std::vector<Queues> queues_;  // by rank
  std::vector<int> active_;     // ranks with something queued, in the order first queued
  std::array<int, Hierarchy::kDepth> open_{};  // messages of each slot not complete
  Fail fail_;
  const CallHeader& call_;
  Mismatch mismatch_;
};

}  // namespace dtrain::runtime
