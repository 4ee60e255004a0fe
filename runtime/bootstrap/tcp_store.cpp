// The TCP store (torchrun's MASTER_ADDR/MASTER_PORT rendezvous). Rank 0 runs a small server
// thread holding the table; every rank, rank 0 included, talks to it over one client connection.
//
// Wire format, both directions: a 1-byte command, then fixed-size numbers and length-prefixed
// (uint32) strings, in host order: every rank of a job runs the same build on the same
// architecture.
//   SET key value                          -> (no reply)
//   WAIT values(u8) timeout_ms(u64) n(u32) keys...
//        -> n_missing(u32), then the n values when it is 0 and values were asked for, else the
//           missing keys. The server answers at the latest when the timeout passes, so a
//           client's timeout leaves its connection in step (it used to break it for good).
//
// At scale (1,024 ranks and more) the server must not be the hot spot: it waits with epoll, so
// each event costs O(1) rather than a scan of every client, a WAIT on many keys is one request
// (rank 0 gathers every rank's address in one), and parked requests are indexed by the key they
// still miss.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "bootstrap/store.hpp"
#include "bootstrap/store_errors.hpp"
#include "common/open_files.hpp"
#include "common/thread_name.hpp"
#include "dtrain/dtrain.hpp"
#include "net/socket.hpp"

namespace dtrain::runtime {
namespace {

using net::Clock;
using net::IoResult;

enum : std::uint8_t { kSet = 1, kWait = 2 };

// Descriptors rank 0 needs beside one per client: its own client, the listener, the wake-up and
// epoll descriptors, the communicator's connections and a margin for the program's own files.
constexpr std::uint64_t kServerSpareFiles = 64;

void put_u32(std::string& out, std::uint32_t v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_string(std::string& out, const std::string& s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out += s;
}

// Reads numbers and strings from a buffer that may hold only part of a frame: every take returns
// false when the bytes are not all there yet.
class StoreFrameReader {
 public:
  explicit StoreFrameReader(const std::string& in, std::size_t pos = 0) : in_(in), pos_(pos) {}
  template <typename T>
  bool take(T& v) {
    if (in_.size() < pos_ + sizeof v) return false;
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return true;
  }
  bool take(std::string& s) {
    std::uint32_t len = 0;
    if (!take(len) || in_.size() < pos_ + len) return false;
    s.assign(in_, pos_, len);
    pos_ += len;
    return true;
  }
  std::size_t pos() const { return pos_; }

 private:
  const std::string& in_;
  std::size_t pos_;
};

// The server: single-threaded, epoll over the listener, the clients and a wake-up eventfd.
class TcpStoreServer {
 public:
  explicit TcpStoreServer(net::Socket listener)
      : listener_(std::move(listener)),
        wake_(::eventfd(0, EFD_CLOEXEC)),
        epoll_(::epoll_create1(EPOLL_CLOEXEC)) {
    watch(wake_);
    watch(listener_.fd());
    thread_ = named_thread("dtrain-store", [this] { run(); });
  }
  ~TcpStoreServer() {
    const std::uint64_t one = 1;
    if (::write(wake_, &one, sizeof one) < 0) {
      // Nothing to do: the thread also notices a closed listener at its next wait.
    }
    thread_.join();
    ::close(wake_);
    ::close(epoll_);
  }

 private:
  struct Client {
    net::Socket socket;
    std::string in;  // bytes received, not yet a whole frame
  };
  // A WAIT not answered yet.
  struct Waiter {
    int fd;
    std::vector<std::string> keys;
    std::size_t missing;
    Clock::time_point deadline;
    bool values;
    bool answered = false;
  };
  using Waiters = std::list<Waiter>;

  void watch(int fd) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
  }

  void run() {
    std::vector<epoll_event> events(256);
    for (;;) {
      const int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), wait_ms());
      for (int i = 0; i < n; ++i) {
        const int fd = events[static_cast<std::size_t>(i)].data.fd;
        if (fd == wake_) return;
        if (fd == listener_.fd()) {
          accept_all();
        } else {
          read_from(fd);
        }
      }
      expire();
    }
  }

  void accept_all() {
    for (;;) {
      net::Socket s = net::accept_until(listener_, Clock::now());
      if (!s.valid()) return;
      const int fd = s.fd();
      watch(fd);
      clients_[fd] = Client{std::move(s), {}};
    }
  }

  void read_from(int fd) {
    auto it = clients_.find(fd);
    if (it == clients_.end()) return;
    Client& c = it->second;
    char buf[65536];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      // A rank left; its parked requests die with it.
      for (Waiter& w : waiters_) {
        if (w.fd == fd) w.answered = true;
      }
      ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
      clients_.erase(it);
      return;
    }
    if (n > 0) c.in.append(buf, static_cast<std::size_t>(n));
    std::size_t used = 0;
    while (handle_frame(fd, c.in, used)) {
    }
    c.in.erase(0, used);
  }

  // Handles the whole frame at c.in[used...], moving `used` past it; false when none is complete.
  bool handle_frame(int fd, const std::string& in, std::size_t& used) {
    if (in.size() <= used) return false;
    const auto cmd = static_cast<std::uint8_t>(in[used]);
    StoreFrameReader r(in, used + 1);
    if (cmd == kSet) {
      std::string key;
      std::string value;
      if (!r.take(key) || !r.take(value)) return false;
      used = r.pos();
      set(key, std::move(value));
      return true;
    }
    std::uint8_t values = 0;
    std::uint64_t timeout_ms = 0;
    std::uint32_t n = 0;
    if (!r.take(values) || !r.take(timeout_ms) || !r.take(n)) return false;
    std::vector<std::string> keys(n);
    for (auto& k : keys) {
      if (!r.take(k)) return false;
    }
    used = r.pos();
    park(fd, std::move(keys), timeout_ms, values != 0);
    return true;
  }

  void set(const std::string& key, std::string value) {
    table_[key] = std::move(value);
    auto [first, last] = waiting_on_.equal_range(key);
    std::vector<Waiters::iterator> ready;
    for (auto it = first; it != last; ++it) {
      Waiter& w = *it->second;
      if (!w.answered && --w.missing == 0) ready.push_back(it->second);
    }
    waiting_on_.erase(first, last);
    for (auto w : ready) answer(w);
  }

  void park(int fd, std::vector<std::string> keys, std::uint64_t timeout_ms, bool values) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    waiters_.push_back(Waiter{fd, std::move(keys), 0, deadline, values});
    const auto w = std::prev(waiters_.end());
    for (const auto& k : w->keys) {
      if (table_.contains(k)) continue;
      ++w->missing;
      waiting_on_.emplace(k, w);
    }
    if (w->missing == 0) answer(w);
  }

  // Replies to a WAIT: every value (or none, when the values were not asked for), or the keys
  // still missing at its deadline.
  void answer(Waiters::iterator w) {
    std::string reply;
    std::vector<const std::string*> missing;
    for (const auto& k : w->keys) {
      if (!table_.contains(k)) missing.push_back(&k);
    }
    put_u32(reply, static_cast<std::uint32_t>(missing.size()));
    for (const std::string* k : missing) put_string(reply, *k);
    if (missing.empty() && w->values) {
      for (const auto& k : w->keys) put_string(reply, table_.at(k));
    }
    // A client that cannot take the reply within seconds is gone (it reads as soon as it asks).
    net::send_all(w->fd, reply.data(), reply.size(), Clock::now() + std::chrono::seconds(10));
    w->answered = true;
  }

  // Answers the waits whose deadline passed and forgets the answered ones.
  void expire() {
    const auto now = Clock::now();
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (!it->answered && it->deadline <= now) answer(it);
      if (!it->answered) {
        ++it;
        continue;
      }
      for (const auto& k : it->keys) {
        auto [first, last] = waiting_on_.equal_range(k);
        for (auto e = first; e != last;) e = e->second == it ? waiting_on_.erase(e) : std::next(e);
      }
      it = waiters_.erase(it);
    }
  }

  // Until the nearest deadline of a parked wait; -1 (no timeout) when none is parked.
  int wait_ms() const {
    int ms = -1;
    const auto now = Clock::now();
    for (const Waiter& w : waiters_) {
      if (w.answered) continue;
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(w.deadline - now).count();
      const int m = left <= 0 ? 0 : left > 60000 ? 60000 : static_cast<int>(left);
      if (ms < 0 || m < ms) ms = m;
    }
    return ms;
  }

  net::Socket listener_;
  int wake_;
  int epoll_;
  std::thread thread_;
  std::unordered_map<int, Client> clients_;
  std::unordered_map<std::string, std::string> table_;
  Waiters waiters_;
  std::unordered_multimap<std::string, Waiters::iterator> waiting_on_;  // key -> waits missing it
};

class TcpStore final : public Store {
 public:
  TcpStore(const std::string& host, int port, int rank, int size, std::chrono::milliseconds timeout)
      : where_(host + ":" + std::to_string(port)) {
    if (rank == 0) {
      check_open_files(size);
      server_ = std::make_unique<TcpStoreServer>(net::listen_on("", port));
    }
    socket_ = net::connect_until(
        host, port, Clock::now() + timeout,
        "store: tcp: rank " + std::to_string(rank) + " (MASTER_ADDR:MASTER_PORT)");
  }

  void set(const std::string& key, const std::string& value) override {
    std::lock_guard lock(mutex_);
    std::string frame(1, static_cast<char>(kSet));
    put_string(frame, key);
    put_string(frame, value);
    io(net::send_all(socket_.fd(), frame.data(), frame.size(),
                     Clock::now() + std::chrono::seconds(60)),
       "set \"" + key + "\"");
  }

  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    (void)request(keys, timeout, false);
  }

  std::string get(const std::string& key, std::chrono::milliseconds timeout) override {
    return request({key}, timeout, true).front();
  }

  std::vector<std::string> get_many(const std::vector<std::string>& keys,
                                    std::chrono::milliseconds timeout) override {
    return request(keys, timeout, true);
  }

  std::string_view method() const override { return "tcp"; }

 private:
  // One WAIT: the values (when `values`), or StoreTimeout naming the keys the server still missed
  // at the deadline.
  std::vector<std::string> request(const std::vector<std::string>& keys,
                                   std::chrono::milliseconds timeout, bool values) {
    std::lock_guard lock(mutex_);
    const std::string what = keys.size() == 1 ? "wait \"" + keys.front() + "\""
                                              : "wait for " + std::to_string(keys.size()) + " keys";
    std::string frame(1, static_cast<char>(kWait));
    frame += static_cast<char>(values ? 1 : 0);
    const auto ms = static_cast<std::uint64_t>(timeout.count());
    frame.append(reinterpret_cast<const char*>(&ms), sizeof ms);
    put_u32(frame, static_cast<std::uint32_t>(keys.size()));
    for (const auto& k : keys) put_string(frame, k);
    // The server answers by the deadline; the grace covers its queue and the transfer (at 1,024
    // ranks every rank asks it for the address table at about the same moment).
    const auto deadline = Clock::now() + timeout + std::chrono::seconds(30);
    io(net::send_all(socket_.fd(), frame.data(), frame.size(), deadline), what);
    std::uint32_t missing = 0;
    io(net::recv_all(socket_.fd(), &missing, sizeof missing, deadline), what);
    std::vector<std::string> out(missing > 0 ? missing : values ? keys.size() : 0);
    for (auto& s : out) {
      std::uint32_t len = 0;
      io(net::recv_all(socket_.fd(), &len, sizeof len, deadline), what);
      s.resize(len);
      io(net::recv_all(socket_.fd(), s.data(), len, deadline), what);
    }
    if (missing > 0) throw_store_timeout(method(), std::move(out), timeout);
    return out;
  }

  // Rank 0's server holds one connection per rank: with too few descriptors it would fail in the
  // middle of the rendezvous, so say so now.
  static void check_open_files(int size) {
    const std::uint64_t needed = static_cast<std::uint64_t>(size) + kServerSpareFiles;
    const std::uint64_t allowed = raise_open_files(needed);
    if (allowed >= needed) return;
    throw Error(Error::Code::kSystem,
                "dtrain: store: tcp: rank 0 serves the rendezvous to " + std::to_string(size) +
                    " ranks and needs about " + std::to_string(needed) +
                    " open files, but may open only " + std::to_string(allowed) +
                    " (ulimit -n; the hard limit is the most it can raise itself to): raise the "
                    "limit in the job script or the launcher");
  }

  void io(IoResult r, const std::string& what) {
    if (broken_) {
      throw Error(Error::Code::kComm, "dtrain: store: tcp: " + what +
                                          ": an earlier request failed; the store connection "
                                          "to " +
                                          where_ + " is unusable");
    }
    if (r == IoResult::kOk) return;
    broken_ = true;
    const char* why = r == IoResult::kClosed    ? "the server (rank 0) closed the connection"
                      : r == IoResult::kTimeout ? "the server (rank 0) did not answer in time"
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

std::shared_ptr<Store> make_tcp_store(const std::string& host, int port, int rank, int size,
                                      std::chrono::milliseconds timeout) {
  return std::make_shared<TcpStore>(host, port, rank, size, timeout);
}

}  // namespace dtrain::runtime
