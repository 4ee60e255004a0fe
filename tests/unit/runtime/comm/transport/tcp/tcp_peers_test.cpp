// Connections from another process to a rank's listeners: ports are reused, so a rank that
// connects to a peer that has exited may reach whoever listens on that port now (another job's
// rank on the node, another communicator of this job: 4 copies of the mismatch test side by side
// hit it 9 times in 1,600 runs). Each listener's key (peer_address.hpp) keeps them out.
#include "comm/transport/tcp/tcp_peers.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "comm/point_to_point/wire_format.hpp"
#include "comm/transport/tcp/peer_address.hpp"
#include "tcp_test_ranks.hpp"
#include "threads_as_ranks.hpp"

namespace {

namespace net = dtrain::runtime::net;
namespace wire = dtrain::runtime::wire;
using dtrain::DType;
using dtrain::ReduceOp;

// A stranger's connection to `port` on this host, its first bytes sent and the socket kept open,
// as a live process keeps it.
net::Socket stranger(int port, const void* bytes, std::size_t n) {
  const auto deadline = net::Clock::now() + std::chrono::seconds(5);
  net::IoResult how = net::IoResult::kOk;
  net::Socket s = net::connect_once("127.0.0.1", port, deadline, &how);
  EXPECT_EQ(how, net::IoResult::kOk);
  if (how == net::IoResult::kOk) {
    EXPECT_EQ(net::send_all(s.fd(), bytes, n, deadline), net::IoResult::kOk);
  }
  return s;
}

// The collectives' hello (tcp_peers.cpp): rank, connection (0 data, 1 control), key.
struct CollectiveHello {
  std::int32_t rank;
  std::int32_t channel;
  std::uint64_t key;
};

// Rank 0's listeners get, before rank 1 connects: on the collectives' port a hello of rank 1's
// data connection and one of rank 0 itself (which a build before the key took for a malformed
// hello and stopped on), and on the mailbox's port a hello of rank 1 with a message of tag 5;
// each with another key. Rank 0 goes on: the allreduce sums both ranks and the receive gets
// rank 1's message, not the stranger's.
TEST(TcpPeers, AnotherProcesssConnectionsToARanksListenersAreDropped) {
  auto store = dtrain::runtime::make_memory_store();
  std::atomic<bool> strangers_in{false};
  std::vector<net::Socket> strangers;
  // The strangers connect as soon as rank 0 has published its address: rank 0 is still in its
  // set-up then, which connects it to rank 1 (the ring's neighbours), and rank 1 starts after.
  std::thread other_process([&] {
    const auto a =
        dtrain::runtime::parse_peer_address(store->get("tcp/addr/0", std::chrono::seconds(10)));
    ASSERT_TRUE(a);
    const std::uint64_t other_key = a->key ^ 1;
    for (const CollectiveHello h : {CollectiveHello{1, 0, other_key}, {0, 1, other_key}}) {
      strangers.push_back(stranger(a->port, &h, sizeof h));
    }
    std::array<char, wire::kHelloBytes + wire::kHeaderBytes + sizeof(float)> m{};
    wire::write_hello(m.data(), 1, 2, other_key);
    wire::write_header(m.data() + wire::kHelloBytes, {5, sizeof(float), {}});
    const float bad = 666;
    std::memcpy(m.data() + wire::kHelloBytes + wire::kHeaderBytes, &bad, sizeof bad);
    strangers.push_back(stranger(a->mail_port, m.data(), m.size()));
    strangers_in = true;
  });
  float sum0 = 0;
  float got = 0;
  std::vector<std::string> errors(2);
  dtrain::test::threads_as_ranks(2, [&](int rank) {
    try {
      if (rank == 1) {
        while (!strangers_in) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      dtrain::runtime::Settings s = dtrain::test::settings(false);
      dtrain::runtime::PrefixStore tcp(store, "tcp");
      dtrain::runtime::Engine engine(dtrain::runtime::make_tcp_communicator(tcp, rank, 2, s), rank,
                                     2, s);
      dtrain::Comm comm(engine);
      float x = 1;
      comm.allreduce(&x, &x, 1, DType::kFloat32, ReduceOp::kSum);
      if (rank == 0) {
        sum0 = x;
        comm.recv(&got, 1, DType::kFloat32, 1, 5);
      } else {
        const float sent = 7;
        comm.send(&sent, 1, DType::kFloat32, 0, 5);
      }
    } catch (const dtrain::Error& e) {
      errors[static_cast<std::size_t>(rank)] = e.what();
    }
  });
  other_process.join();
  EXPECT_EQ(errors, std::vector<std::string>(2));
  EXPECT_EQ(sum0, 2);
  EXPECT_EQ(got, 7);
}

}  // namespace
