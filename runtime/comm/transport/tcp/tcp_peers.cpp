#include "comm/transport/tcp/tcp_peers.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>

#include "bootstrap/store_errors.hpp"
#include "comm/transport/tcp/peer_address.hpp"
#include "comm/transport/tcp/tcp_loss.hpp"
#include "dtrain/dtrain.hpp"
#include "net/random_token.hpp"

namespace dtrain::runtime {
namespace {

using net::Clock;
using net::IoResult;

enum Channel : std::int32_t { kData = 0, kControl = 1 };

// The first bytes on every connection, from the rank that connects (the higher one): who it is,
// which of the pair's connections this is, and the key the listening rank published with its
// address (peer_address.hpp).
struct Hello {
  std::int32_t rank = -1;
  std::int32_t channel = -1;
  std::uint64_t key = 0;
};

// What rank 0 publishes instead of the table when some rank never published its address, so that
// every rank names the same ranks.
constexpr const char* kMissing = "missing ";
// How much longer than rank 0 the others wait for the table: rank 0's verdict on a rank that never
// started comes at rank 0's deadline, which began at rank 0's own start. At most the timeout
// again, so that a short DTRAIN_TIMEOUT stays short.
std::chrono::milliseconds table_grace(std::chrono::milliseconds timeout) {
  return std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(5));
}

std::string seconds(std::chrono::milliseconds t) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(t.count()) / 1000.0);
  return text;
}

// "ranks 1, 5 never published their addresses" / "rank 1 never published its address", from
// join_ranks()'s "1, 5": rank 0's message and, from the verdict it publishes, everyone else's.
std::string never_published(const std::string& list) {
  const bool one = list.find(',') == std::string::npos;
  return (one ? "rank " : "ranks ") + list +
         (one ? " never published its address" : " never published their addresses");
}

std::string address_key(int rank) { return "addr/" + std::to_string(rank); }

// Rank 0: every rank's "host:port node" (`keys`: address_key of each), one per line, or
// kMissing and the ranks that never published theirs within `timeout` (then it throws, naming
// them).
std::string gather_table(Store& store, const std::vector<std::string>& keys,
                         std::chrono::milliseconds timeout) {
  try {
    std::string table;
    for (const std::string& line : store.get_many(keys, timeout)) table += line + "\n";
    return table;
  } catch (const StoreTimeout& e) {
    std::vector<int> missing;
    for (const std::string& k : e.missing()) missing.push_back(std::stoi(k.substr(5)));
    store.set("addr-table", kMissing + join_ranks(missing));
    std::string why = e.what();
    if (why.rfind("dtrain: ", 0) == 0) why.erase(0, 8);
    throw Error(Error::Code::kTimeout,
                "dtrain: tcp: rank 0: " + never_published(join_ranks(missing)) + ": " + why);
  }
}

}  // namespace

TcpPeers::TcpPeers(Store& store, int rank, int size, std::chrono::milliseconds timeout,
                   const std::string& node_name)
    : rank_(rank),
      size_(size),
      listener_(net::listen_on("", 0)),
      mail_listener_(net::listen_on("", 0)),
      key_(net::draw_token()),
      hosts_(static_cast<std::size_t>(size)),
      ports_(static_cast<std::size_t>(size)),
      mail_ports_(static_cast<std::size_t>(size)),
      keys_(static_cast<std::size_t>(size)),
      nodes_(static_cast<std::size_t>(size)),
      data_(static_cast<std::size_t>(size)),
      control_(static_cast<std::size_t>(size)) {
  const std::string name = net::local_host_name();
  const std::string host = name.empty() ? "127.0.0.1" : name;
  // The ranks on this host reach each other through the loopback when its name does not resolve
  // here (net::connectable); ranks elsewhere need the name as published.
  const std::string same_host = net::connectable(host);
  // Where to connect for the collectives and for point-to-point messages (mailbox.hpp), with
  // what key, and the node, which only tests make differ.
  store.set(address_key(rank),
            format_peer_address({host, net::local_port(listener_), net::local_port(mail_listener_),
                                 key_, node_name.empty() ? host : node_name}));
  std::string table;
  std::vector<std::string> keys;
  keys.reserve(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) keys.push_back(address_key(r));
  if (auto all = store.gather_at_fence(keys, timeout)) {
    // PMIx: one fence brings every rank's address here.
    for (const std::string& line : *all) table += line + "\n";
  } else if (rank == 0) {
    table = gather_table(store, keys, timeout);
    store.set("addr-table", table);
  } else {
    try {
      table = store.get("addr-table", timeout + table_grace(timeout));
    } catch (const StoreTimeout& e) {
      std::string why = e.what();
      if (why.rfind("dtrain: ", 0) == 0) why.erase(0, 8);
      throw Error(Error::Code::kTimeout, "dtrain: tcp: rank " + std::to_string(rank) +
                                             ": rank 0 never published the address table: " + why);
    }
    if (table.rfind(kMissing, 0) == 0) {
      const std::string list = table.substr(std::string(kMissing).size());
      throw Error(Error::Code::kTimeout,
                  "dtrain: tcp: rank " + std::to_string(rank) + ": " + never_published(list) +
                      " (rank 0, which gathers them, waited " + seconds(timeout) +
                      " s, DTRAIN_TIMEOUT): did " +
                      (list.find(',') == std::string::npos ? "it" : "they") + " start?");
    }
  }
  std::istringstream lines(table);
  std::string line;
  for (int r = 0; r < size; ++r) {
    std::getline(lines, line);
    const std::optional<PeerAddress> a = parse_peer_address(line);
    if (!a) {
      throw Error(Error::Code::kComm, "dtrain: tcp: rank " + std::to_string(rank) +
                                          ": the address table has no valid line for rank " +
                                          std::to_string(r) + ": \"" + line +
                                          "\" (expected \"host:port/mail-port/key node\")");
    }
    const auto p = static_cast<std::size_t>(r);
    hosts_[p] = a->host == host ? same_host : a->host;
    ports_[p] = a->port;
    mail_ports_[p] = a->mail_port;
    keys_[p] = a->key;
    nodes_[p] = a->node;
  }
}

TcpPeers::Outcome TcpPeers::connect(const std::vector<int>& peers, Clock::time_point deadline) {
  for (int q : peers) {
    if (q < rank_ && !complete(q)) {
      const Outcome o = connect_to(q, deadline);
      if (o.how != IoResult::kOk) return o;
    }
  }
  for (int q : peers) {
    if (q > rank_ && !complete(q)) {
      const Outcome o = accept_from(q, deadline);
      if (o.how != IoResult::kOk) return o;
    }
  }
  return {};
}

TcpPeers::Outcome TcpPeers::connect_to(int peer, Clock::time_point deadline) {
  const auto p = static_cast<std::size_t>(peer);
  for (const Channel channel : {kData, kControl}) {
    IoResult how = IoResult::kOk;
    // The peer listened before it published its address: a refusal means it is gone.
    net::Socket s = net::connect_once(hosts_[p], ports_[p], deadline, &how);
    const Hello hello{rank_, channel, keys_[p]};
    if (how == IoResult::kOk) how = net::send_all(s.fd(), &hello, sizeof hello, deadline);
    if (how != IoResult::kOk) return {how, peer, errno};
    (channel == kData ? data_ : control_)[p] = std::move(s);
  }
  connected_.push_back(peer);
  return {};
}

TcpPeers::Outcome TcpPeers::accept_from(int peer, Clock::time_point deadline) {
  // While it waits, the connected peers' control connections: a peer that sends an abort frame
  // has stopped, and the peer awaited may be waiting on it, so say so now rather than at the
  // deadline. One that only closes may have finished its part of the job and exited; a killed one
  // is reported by its own peers' frames.
  std::vector<pollfd> watch = {{listener_.fd(), POLLIN, 0}};
  for (int q : connected_) watch.push_back({control(q), POLLIN, 0});
  while (!complete(peer)) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return {IoResult::kTimeout, peer, 0};
    if (::poll(watch.data(), watch.size(), static_cast<int>(std::min<long>(left, 1000))) <= 0) {
      continue;
    }
    for (std::size_t i = 1; i < watch.size(); ++i) {
      if (watch[i].revents == 0) continue;
      char byte = 0;
      if (::recv(watch[i].fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 1) {
        return {IoResult::kClosed, connected_[i - 1], 0};
      }
      watch[i].fd = -1;  // closed without a frame: nothing more will come
    }
    if (watch[0].revents != 0) accept_waiting(deadline);
  }
  return {};
}

void TcpPeers::accept_waiting(Clock::time_point deadline) {
  if (!listener_.valid()) return;  // stopped accepting
  for (net::Socket s = net::accept_until(listener_, Clock::now()); s.valid();
       s = net::accept_until(listener_, Clock::now())) {
    place(std::move(s), deadline);
  }
}

void TcpPeers::stop_accepting() {
  // The peer sends its hello right after connecting.
  accept_waiting(Clock::now() + std::chrono::milliseconds(100));
  listener_ = net::Socket();
}

void TcpPeers::shut_all() {
  for (int q : held()) {
    if (data(q) >= 0) ::shutdown(data(q), SHUT_RDWR);
    if (control(q) >= 0) ::shutdown(control(q), SHUT_WR);
  }
}

std::vector<int> TcpPeers::held() const {
  std::vector<int> out = connected_;
  for (int q = 0; q < size_; ++q) {
    if (!complete(q) && (data(q) >= 0 || control(q) >= 0)) out.push_back(q);
  }
  return out;
}

// A connection from a higher rank: into its slot by its hello. One that closes before its hello
// (its rank died just after connecting) is dropped: the rank is missed where it is needed. So is
// one without this listener's key: another process's, which connected to a port this listener
// took over after the rank it meant had exited (another job's on the node, or another
// communicator's of this job: 4 copies of a unit test side by side, 9 runs in 1,600). Its
// sender then sees the connection close, as its peer did. Before the key this rank took it for a
// malformed hello and stopped, or for its own peer's connection.
void TcpPeers::place(net::Socket s, Clock::time_point deadline) {
  Hello h;
  if (net::recv_all(s.fd(), &h, sizeof h, deadline) != IoResult::kOk || h.key != key_) return;
  if (h.rank <= rank_ || h.rank >= size_ || (h.channel != kData && h.channel != kControl)) {
    throw Error(Error::Code::kComm, "dtrain: tcp: rank " + std::to_string(rank_) +
                                        ": a connection with this listener's key but a malformed "
                                        "hello (rank " +
                                        std::to_string(h.rank) + ", channel " +
                                        std::to_string(h.channel) + ")");
  }
  const auto p = static_cast<std::size_t>(h.rank);
  net::Socket& slot = (h.channel == kData ? data_ : control_)[p];
  const bool had = complete(h.rank);
  slot = std::move(s);
  if (!had && complete(h.rank)) connected_.push_back(h.rank);
}

std::vector<MailboxAddress> TcpPeers::mailbox_addresses() const {
  std::vector<MailboxAddress> all(static_cast<std::size_t>(size_));
  for (std::size_t r = 0; r < all.size(); ++r) {
    all[r] = {hosts_[r], mail_ports_[r], keys_[r], nodes_[r]};
  }
  return all;
}

}  // namespace dtrain::runtime
