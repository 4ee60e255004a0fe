// The hierarchical allreduce's TCP link over socket pairs: messages larger than the sockets'
// buffers both ways at once in several slots, in the order posted; the peers still owed a message
// named per slot; a peer that closes with bytes owed goes to the failure callback.
#include "comm/transport/tcp/tcp_peer_transport.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "comm/call_check.hpp"
#include "dtrain/dtrain.hpp"

namespace {

using dtrain::runtime::TcpPeerTransport;
using dtrain::runtime::net::IoResult;

struct Pair {
  int fd[2] = {-1, -1};
  Pair() {
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fd) != 0) throw std::runtime_error("socketpair");
    for (int f : fd) ::fcntl(f, F_SETFL, ::fcntl(f, F_GETFL) | O_NONBLOCK);
  }
  ~Pair() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
};

struct Failure {
  int peer;
  IoResult how;
};

TcpPeerTransport::Fail throwing() {
  return [](int peer, IoResult how, int) { throw Failure{peer, how}; };
}

struct Mismatch {
  int peer;
  dtrain::runtime::CallHeader theirs;
};

TcpPeerTransport::Mismatch throwing_mismatch() {
  return [](int peer, const dtrain::runtime::CallHeader& theirs) { throw Mismatch{peer, theirs}; };
}

// The call both ends of a link are in (each message carries it).
const dtrain::runtime::CallHeader kCall = dtrain::runtime::CallHeader::of(
    1000,
    {dtrain::runtime::CallWhat::Kind::kAllreduce, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum});

TcpPeerTransport link(std::vector<int> fds, const dtrain::runtime::CallHeader& call = kCall) {
  return TcpPeerTransport(std::move(fds), throwing(), call, throwing_mismatch());
}

std::vector<std::uint32_t> pattern(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = seed * 2654435761u + static_cast<std::uint32_t>(i);
  return v;
}

// Rank `self` of 2 sends 3 messages per slot in 2 slots to the other and receives 3 per slot.
void exchange(TcpPeerTransport& link, int self, std::vector<std::vector<std::uint32_t>>& got) {
  const int other = 1 - self;
  constexpr std::size_t kWords = std::size_t{1} << 20;  // 4 MiB, beyond a socket's buffer
  std::vector<std::vector<std::uint32_t>> sent;
  for (int m = 0; m < 6; ++m) sent.push_back(pattern(kWords + m, self * 10 + m));
  got.assign(6, {});
  for (int m = 0; m < 6; ++m) {
    got[m].resize(kWords + m);
    link.recv(m % 2, got[m].data(), got[m].size() * 4, other);
    link.send(m % 2, sent[m].data(), sent[m].size() * 4, other);
  }
  for (int slot : {1, 0}) {
    while (!link.done(slot)) std::this_thread::yield();
  }
}

TEST(TcpPeerTransport, LargeMessagesBothWaysArriveInTheOrderPosted) {
  Pair p;
  TcpPeerTransport a = link({-1, p.fd[0]});
  TcpPeerTransport b = link({p.fd[1], -1});
  std::vector<std::vector<std::uint32_t>> got_a, got_b;
  std::thread t([&] { exchange(b, 1, got_b); });
  exchange(a, 0, got_a);
  t.join();
  for (int m = 0; m < 6; ++m) {
    EXPECT_EQ(got_a[m], pattern(got_a[m].size(), 10 + m)) << m;
    EXPECT_EQ(got_b[m], pattern(got_b[m].size(), m)) << m;
  }
  EXPECT_TRUE(a.waiting(0).empty());
}

TEST(TcpPeerTransport, NamesThePeersStillOwingASlot) {
  Pair p;
  TcpPeerTransport a = link({-1, p.fd[0]});
  std::uint32_t in = 0;
  a.recv(3, &in, sizeof in, 1);
  EXPECT_FALSE(a.done(3));
  EXPECT_EQ(a.waiting(3), std::vector<int>{1});
  EXPECT_TRUE(a.waiting(2).empty());
  EXPECT_TRUE(a.done(2));
  // Another rank's message: the call's header, then the bytes.
  ASSERT_EQ(::write(p.fd[1], &kCall, sizeof kCall), static_cast<ssize_t>(sizeof kCall));
  const std::uint32_t out = 77;
  ASSERT_EQ(::write(p.fd[1], &out, sizeof out), static_cast<ssize_t>(sizeof out));
  while (!a.done(3)) std::this_thread::yield();
  EXPECT_EQ(in, 77u);
  EXPECT_TRUE(a.waiting(3).empty());
}

TEST(TcpPeerTransport, APeerThatClosesWithBytesOwedIsAFailure) {
  Pair p;
  TcpPeerTransport a = link({-1, p.fd[0]});
  std::vector<char> in(100);
  a.recv(0, in.data(), in.size(), 1);
  ASSERT_EQ(::write(p.fd[1], in.data(), 10), 10);  // part of it, then gone
  ::close(p.fd[1]);
  p.fd[1] = -1;
  try {
    while (!a.done(0)) std::this_thread::yield();
    FAIL() << "no failure";
  } catch (const Failure& f) {
    EXPECT_EQ(f.peer, 1);
    EXPECT_EQ(f.how, IoResult::kClosed);
  }
}

TEST(TcpPeerTransport, SendingToAPeerThatIsGoneIsAFailure) {
  Pair p;
  TcpPeerTransport a = link({-1, p.fd[0]});
  ::close(p.fd[1]);
  p.fd[1] = -1;
  std::vector<char> out(1 << 20);
  try {
    a.send(1, out.data(), out.size(), 1);
    while (!a.done(1)) std::this_thread::yield();
    FAIL() << "no failure";
  } catch (const Failure& f) {
    EXPECT_EQ(f.peer, 1);
    EXPECT_EQ(f.how, IoResult::kClosed);
  }
}

TEST(TcpPeerTransport, ARankWithoutAConnectionIsABug) {
  Pair p;
  TcpPeerTransport a = link({-1, p.fd[0]});
  char c = 0;
  EXPECT_THROW(a.send(0, &c, 1, 0), dtrain::Error);
  EXPECT_THROW(a.recv(0, &c, 1, 2), dtrain::Error);
}

// A node whose ranks passed another call: the first message's header says so as soon as it
// arrives, although the peer sends fewer bytes than this side waits for (4096 elements where
// this side expects 4097), so the wait cannot end on the bytes.
TEST(TcpPeerTransport, AMessageOfAnotherCallIsRefusedAtItsHeader) {
  using dtrain::runtime::CallHeader;
  using dtrain::runtime::CallWhat;
  Pair p;
  const CallHeader mine = CallHeader::of(4097, CallWhat{});
  const CallHeader theirs = CallHeader::of(4096, CallWhat{});
  TcpPeerTransport a = link({-1, p.fd[0]}, mine);
  TcpPeerTransport b = link({p.fd[1], -1}, theirs);
  std::vector<float> in(4097), out(4096, 1.0f);
  a.recv(0, in.data(), in.size() * sizeof(float), 1);
  b.send(0, out.data(), out.size() * sizeof(float), 0);
  (void)b.done(0);
  try {
    while (!a.done(0)) std::this_thread::yield();
    FAIL() << "a message of another call was taken";
  } catch (const Mismatch& m) {
    EXPECT_EQ(m.peer, 1);
    EXPECT_EQ(m.theirs, theirs);
  }
}

}  // namespace
