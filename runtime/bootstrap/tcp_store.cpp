// The TCP store (torchrun's MASTER_ADDR/MASTER_PORT rendezvous). Rank 0 runs a small server
// thread holding the table; every rank, rank 0 included, talks to it over one client connection.
//
// Wire format, both directions: a 1-byte command, then length-prefixed (uint32, host order: every
// rank of a job runs the same build on the same architecture) strings.
//   SET key value   -> (no reply)
//   GET key         -> value, sent once the key exists (the server parks the request until then)
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "bootstrap/store.hpp"
#include "bootstrap/store_errors.hpp"
#include "dtrain/dtrain.hpp"
#include "net/socket.hpp"

namespace dtrain::runtime {
namespace {

using net::Clock;
using net::IoResult;

enum : std::uint8_t { kSet = 1, kGet = 2 };

// The server: single-threaded, poll() over the listener, the clients and a wake-up eventfd.
class TcpStoreServer {
 public:
  explicit TcpStoreServer(net::Socket listener)
      : listener_(std::move(listener)), wake_(::eventfd(0, EFD_CLOEXEC)) {
    thread_ = std::thread([this] { run(); });
  }
  ~TcpStoreServer() {
    const std::uint64_t one = 1;
    if (::write(wake_, &one, sizeof one) < 0) {
      // Nothing to do: the thread also notices a closed listener at its next poll.
    }
    thread_.join();
    ::close(wake_);
  }

 private:
  struct Client {
    net::Socket socket;
    std::string in;  // bytes received, not yet a whole frame
  };

  void run() {
    std::vector<Client> clients;
    std::multimap<std::string, int> parked;  // key -> client fd waiting for it
    std::map<std::string, std::string> table;
    for (;;) {
      std::vector<pollfd> fds = {{wake_, POLLIN, 0}, {listener_.fd(), POLLIN, 0}};
      for (const Client& c : clients) fds.push_back({c.socket.fd(), POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) continue;
      if (fds[0].revents) return;
      if (fds[1].revents) {
        net::Socket s = net::accept_until(listener_, Clock::now());
        if (s.valid()) clients.push_back({std::move(s), {}});
      }
      for (std::size_t i = 0; i < clients.size(); ++i) {
        Client& c = clients[i];
        char buf[65536];
        const ssize_t n = ::recv(c.socket.fd(), buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
          c.socket = net::Socket();  // a rank left; its parked requests die with it
          continue;
        }
        if (n > 0) c.in.append(buf, static_cast<std::size_t>(n));
        while (handle_frame(c, table, parked)) {
        }
      }
      std::erase_if(clients, [](const Client& c) { return !c.socket.valid(); });
    }
  }

  // Consumes one whole frame from c.in; false when none is complete yet.
  bool handle_frame(Client& c, std::map<std::string, std::string>& table,
                    std::multimap<std::string, int>& parked) {
    std::size_t pos = 1;
    std::string key;
    std::string value;
    if (c.in.empty() || !take(c.in, pos, key)) return false;
    const std::uint8_t cmd = static_cast<std::uint8_t>(c.in[0]);
    if (cmd == kSet && !take(c.in, pos, value)) return false;
    c.in.erase(0, pos);
    if (cmd == kSet) {
      table[key] = value;
      auto [first, last] = parked.equal_range(key);
      for (auto it = first; it != last; ++it) reply(it->second, value);
      parked.erase(first, last);
    } else if (auto it = table.find(key); it != table.end()) {
      reply(c.socket.fd(), it->second);
    } else {
      parked.emplace(key, c.socket.fd());
    }
    return true;
  }

  static bool take(const std::string& in, std::size_t& pos, std::string& out) {
    std::uint32_t len = 0;
    if (in.size() < pos + sizeof len) return false;
    std::memcpy(&len, in.data() + pos, sizeof len);
    if (in.size() < pos + sizeof len + len) return false;
    out.assign(in, pos + sizeof len, len);
    pos += sizeof len + len;
    return true;
  }

  static void reply(int fd, const std::string& value) {
    const auto len = static_cast<std::uint32_t>(value.size());
    // Values are small; a client that cannot take them within seconds is gone.
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    if (net::send_all(fd, &len, sizeof len, deadline) == IoResult::kOk)
      net::send_all(fd, value.data(), value.size(), deadline);
  }

  net::Socket listener_;
  int wake_;
  std::thread thread_;
};

class TcpStore final : public Store {
 public:
  TcpStore(const std::string& host, int port, int rank, std::chrono::milliseconds timeout)
      : where_(host + ":" + std::to_string(port)) {
    if (rank == 0) server_ = std::make_unique<TcpStoreServer>(net::listen_on("", port));
    socket_ = net::connect_until(
        host, port, Clock::now() + timeout,
        "store: tcp: rank " + std::to_string(rank) + " (MASTER_ADDR:MASTER_PORT)");
  }

  void set(const std::string& key, const std::string& value) override {
    std::lock_guard lock(mutex_);
    std::string frame(1, static_cast<char>(kSet));
    append(frame, key);
    append(frame, value);
    io(net::send_all(socket_.fd(), frame.data(), frame.size(),
                     Clock::now() + std::chrono::seconds(60)),
       "set \"" + key + "\"");
  }

  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    const auto deadline = Clock::now() + timeout;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      try {
        (void)get_until(keys[i], deadline, timeout);
      } catch (const Error& e) {
        if (e.code() != Error::Code::kTimeout) throw;
        throw_store_timeout(method(), std::vector<std::string>(keys.begin() + i, keys.end()),
                            timeout);
      }
    }
  }

  std::string get(const std::string& key, std::chrono::milliseconds timeout) override {
    return get_until(key, Clock::now() + timeout, timeout);
  }
  std::string_view method() const override { return "tcp"; }

 private:
  std::string get_until(const std::string& key, Clock::time_point deadline,
                        std::chrono::milliseconds timeout) {
    std::lock_guard lock(mutex_);
    std::string frame(1, static_cast<char>(kGet));
    append(frame, key);
    io(net::send_all(socket_.fd(), frame.data(), frame.size(), deadline), "get \"" + key + "\"");
    std::uint32_t len = 0;
    const IoResult r = net::recv_all(socket_.fd(), &len, sizeof len, deadline);
    if (r == IoResult::kTimeout) {
      // The server still holds our request and would answer it later, out of turn: this
      // connection can no longer be trusted.
      broken_ = true;
      throw_store_timeout(method(), {key}, timeout);
    }
    io(r, "get \"" + key + "\"");
    std::string value(len, '\0');
    io(net::recv_all(socket_.fd(), value.data(), len, deadline), "get \"" + key + "\"");
    return value;
  }

  static void append(std::string& frame, const std::string& s) {
    const auto len = static_cast<std::uint32_t>(s.size());
    frame.append(reinterpret_cast<const char*>(&len), sizeof len);
    frame += s;
  }

  void io(IoResult r, const std::string& what) {
    if (broken_) {
      throw Error(Error::Code::kComm, "dtrain: store: tcp: " + what +
                                          ": an earlier request timed out; the store connection "
                                          "to " +
                                          where_ + " is unusable");
    }
    if (r == IoResult::kOk) return;
    broken_ = true;
    const char* why = r == IoResult::kClosed    ? "the server (rank 0) closed the connection"
                      : r == IoResult::kTimeout ? "timed out (DTRAIN_TIMEOUT)"
                                                : "socket error";
    throw Error(r == IoResult::kTimeout ? Error::Code::kTimeout : Error::Code::kComm,
                "dtrain: store: tcp: " + what + " on " + where_ + ": " + why);
  }

  std::string where_;
  std::unique_ptr<TcpStoreServer> server_;  // rank 0 only; outlives socket_ (declared first)
  net::Socket socket_;
  std::mutex mutex_;
  bool broken_ = false;
};

}  // namespace

std::shared_ptr<Store> make_tcp_store(const std::string& host, int port, int rank,
                                      std::chrono::milliseconds timeout) {
  return std::make_shared<TcpStore>(host, port, rank, timeout);
}

}  // namespace dtrain::runtime
