#include "comm/transport/tcp/tcp_peer_transport.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "comm/transport/tcp/call_framing.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {
namespace {

using net::would_block;

// As net::send_all and recv_all classify them: a reset or a broken pipe is a peer that went away.
net::IoResult failure_of(int error) {
  return error == EPIPE || error == ECONNRESET ? net::IoResult::kClosed : net::IoResult::kError;
}

}  // namespace

TcpPeerTransport::TcpPeerTransport(std::vector<int> fd_of_rank, Fail fail, const CallHeader& call,
                                   Mismatch mismatch)
    : fds_(std::move(fd_of_rank)),
      queues_(fds_.size()),
      fail_(std::move(fail)),
      call_(call),
      mismatch_(std::move(mismatch)) {}

TcpPeerTransport::Queues& TcpPeerTransport::queues_of(int peer) {
  if (peer < 0 || static_cast<std::size_t>(peer) >= fds_.size() ||
      fds_[static_cast<std::size_t>(peer)] < 0) {
    throw Error(Error::Code::kInternal,
                "dtrain: allreduce: no connection to rank " + std::to_string(peer));
  }
  Queues& q = queues_[static_cast<std::size_t>(peer)];
  if (q.out.empty() && q.in.empty()) active_.push_back(peer);
  return q;
}

void TcpPeerTransport::send(int slot, const void* buf, std::size_t bytes, int peer) {
  if (bytes == 0) return;
  Queues& q = queues_of(peer);
  Message& m = q.out.emplace_back();
  m.slot = slot;
  m.bytes = outgoing(call_, buf, bytes);
  ++open_[static_cast<std::size_t>(slot)];
  transmit(peer);  // most of it usually fits in the socket's buffer at once
}

void TcpPeerTransport::recv(int slot, void* buf, std::size_t bytes, int peer) {
  if (bytes == 0) return;
  Queues& q = queues_of(peer);
  Message& m = q.in.emplace_back();
  m.slot = slot;
  m.bytes = incoming(buf, bytes);
  ++open_[static_cast<std::size_t>(slot)];
}

bool TcpPeerTransport::done(int slot) {
  if (open_[static_cast<std::size_t>(slot)] == 0) return true;
  progress();
  return open_[static_cast<std::size_t>(slot)] == 0;
}

std::vector<int> TcpPeerTransport::waiting(int slot) const {
  std::vector<int> peers;
  for (int peer : active_) {
    const auto& in = queues_[static_cast<std::size_t>(peer)].in;
    if (std::any_of(in.begin(), in.end(), [&](const Message& m) { return m.slot == slot; })) {
      peers.push_back(peer);
    }
  }
  std::sort(peers.begin(), peers.end());
  return peers;
}

void TcpPeerTransport::progress() {
  // Receiving first frees the peers' send buffers; a peer both ways gets both each time.
  for (std::size_t i = 0; i < active_.size(); ++i) {
    receive(active_[i]);
    transmit(active_[i]);
  }
  std::erase_if(active_, [&](int peer) {
    const Queues& q = queues_[static_cast<std::size_t>(peer)];
    return q.out.empty() && q.in.empty();
  });
}

void TcpPeerTransport::transmit(int peer) {
  move(peer, queues_[static_cast<std::size_t>(peer)].out, net::send_some);
}

void TcpPeerTransport::receive(int peer) {
  move(peer, queues_[static_cast<std::size_t>(peer)].in, net::recv_some);
}

void TcpPeerTransport::move(int peer, std::deque<Message>& messages,
                            ssize_t (*io)(int, net::Framed&)) {
  const int fd = fds_[static_cast<std::size_t>(peer)];
  while (!messages.empty()) {
    Message& m = messages.front();
    const bool had_header = m.bytes.header_done();
    const ssize_t n = io(fd, m.bytes);
    if (n == 0) {
      fail_(peer, net::IoResult::kClosed, 0);  // it closed with bytes still owed (a receive)
      return;
    }
    if (n < 0) {
      if (would_block(errno)) return;
      const int error = errno;
      fail_(peer, failure_of(error), error);
      return;
    }
    // A received header, just complete: the peer's call must be this rank's (on the sending side
    // the header was this rank's own). Checked before any wait for bytes it may never send.
    if (!had_header && m.bytes.header_done() &&
        &messages == &queues_[static_cast<std::size_t>(peer)].in) {
      const CallHeader theirs = header_of(m.bytes);
      if (!(theirs == call_)) {
        mismatch_(peer, theirs);
        return;
      }
    }
    if (m.bytes.done()) complete(messages);
  }
}

void TcpPeerTransport::complete(std::deque<Message>& messages) {
  --open_[static_cast<std::size_t>(messages.front().slot)];
  messages.pop_front();
}

}  // namespace dtrain::runtime
