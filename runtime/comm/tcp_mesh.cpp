#include "comm/tcp_mesh.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "comm/tcp_loss.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {
namespace {

using net::Clock;
using net::IoResult;

enum Channel : std::int32_t { kData = 0, kControl = 1 };

// The first bytes on every connection, from the rank that connects (the higher one): who it is,
// which of the pair's connections this is, and its node's name, so that every rank knows every
// rank's node (messages naming a lost peer, the shared-memory and hierarchy decisions) without a
// collective.
struct Hello {
  std::int32_t rank = -1;
  std::int32_t channel = -1;
  std::array<char, 256> host{};
};

std::string local_host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "127.0.0.1";
  return name;
}

class Connector {
 public:
  Connector(Store& store, int rank, int size, std::chrono::milliseconds timeout)
      : store_(store), rank_(rank), size_(size), timeout_(timeout) {
    mesh_.data.resize(static_cast<std::size_t>(size));
    mesh_.control.resize(static_cast<std::size_t>(size));
    mesh_.nodes.resize(static_cast<std::size_t>(size));
  }

  TcpMesh connect(const std::string& node_name) {
    const auto deadline = Clock::now() + timeout_;
    net::Socket listener = net::listen_on("", 0);
    const std::string host = local_host_name();
    const std::string node = node_name.empty() ? host : node_name;
    mesh_.nodes[static_cast<std::size_t>(rank_)] = node;
    // "host:port node": where to connect, and the node, which only tests make differ.
    store_.set("addr/" + std::to_string(rank_),
               host + ":" + std::to_string(net::local_port(listener)) + " " + node);
    Hello hello;
    hello.rank = rank_;
    std::memcpy(hello.host.data(), node.data(), std::min(node.size(), hello.host.size() - 1));
    for (int peer = 0; peer < rank_; ++peer) connect_to(peer, hello, deadline);
    for (int accepted = 0; accepted < 2 * (size_ - 1 - rank_); ++accepted) {
      accept_one(listener, deadline);
    }
    return std::move(mesh_);
  }

 private:
  void connect_to(int peer, Hello& hello, Clock::time_point deadline) {
    const std::string published = peer_address(peer);
    const auto space = published.find(' ');
    const std::string addr = published.substr(0, space);
    const auto colon = addr.rfind(':');
    mesh_.nodes[static_cast<std::size_t>(peer)] =
        space == std::string::npos ? addr.substr(0, colon) : published.substr(space + 1);
    for (const Channel channel : {kData, kControl}) {
      net::Socket s = net::connect_until(
          addr.substr(0, colon), std::stoi(addr.substr(colon + 1)), deadline,
          "tcp: rank " + std::to_string(rank_) + " connecting to rank " + std::to_string(peer));
      hello.channel = channel;
      if (net::send_all(s.fd(), &hello, sizeof hello, deadline) != IoResult::kOk) fail(peer);
      (channel == kData ? mesh_.data : mesh_.control)[static_cast<std::size_t>(peer)] =
          std::move(s);
    }
  }

  void accept_one(const net::Socket& listener, Clock::time_point deadline) {
    net::Socket s = net::accept_until(listener, deadline);
    Hello h;
    if (!s.valid() || net::recv_all(s.fd(), &h, sizeof h, deadline) != IoResult::kOk ||
        h.rank <= rank_ || h.rank >= size_ || (h.channel != kData && h.channel != kControl)) {
      fail(-1);
    }
    auto& slot =
        (h.channel == kData ? mesh_.data : mesh_.control)[static_cast<std::size_t>(h.rank)];
    if (slot.valid()) fail(-1);
    slot = std::move(s);
    h.host.back() = '\0';
    mesh_.nodes[static_cast<std::size_t>(h.rank)] = h.host.data();
  }

  // The address rank `peer` published; a rank that never started never publishes it, and the
  // store's timeout, which names only the key, gets the rank named in front.
  std::string peer_address(int peer) {
    try {
      return store_.get("addr/" + std::to_string(peer), timeout_);
    } catch (const Error& e) {
      if (e.code() != Error::Code::kTimeout) throw;
      std::string why = e.what();
      if (why.rfind("dtrain: ", 0) == 0) why.erase(0, 8);
      throw Error(Error::Code::kTimeout, "dtrain: tcp: rank " + std::to_string(rank_) + ": rank " +
                                             std::to_string(peer) +
                                             " never published its address: " + why);
    }
  }

  // `peer` -1: a higher rank did not connect; the message names those that never did.
  [[noreturn]] void fail(int peer) {
    std::vector<bool> connected(static_cast<std::size_t>(size_));
    for (std::size_t q = 0; q < connected.size(); ++q) {
      connected[q] = mesh_.data[q].valid() && mesh_.control[q].valid();
    }
    throw Error(Error::Code::kComm, setup_failure_message(rank_, size_, peer, connected));
  }

  Store& store_;
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  TcpMesh mesh_;
};

}  // namespace

TcpMesh connect_tcp_mesh(Store& store, int rank, int size, std::chrono::milliseconds timeout,
                         const std::string& node_name) {
  return Connector(store, rank, size, timeout).connect(node_name);
}

}  // namespace dtrain::runtime
