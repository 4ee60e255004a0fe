// TCP throughput between two nodes of the namespace cluster, measured where the bytes arrive (a
// sender's count would include what still sits in its socket buffer). link_check.sh runs one
// stream for the one-way rate, then both directions at once: over two connections (one each
// way, as separate flows) and over one connection carrying both (as Open MPI's TCP transport and
// dtrain's TCP ring do). An honest link carries each direction at its own rate, whatever the
// other direction does.
//
//   link_check listen PORT | connect HOST PORT   then any of
//     send                 write until the other end stops reading
//     recv SECONDS WARMUP  count the bytes that arrive from WARMUP to WARMUP+SECONDS after the
//                          first one; print "GB/s BYTES SECONDS"
// connect retries for 10 s (the listener may start later). Reports only; exits non-zero when no
// connection or no byte came.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kChunk = 1 << 20;

int usage() {
  std::fprintf(
      stderr, "usage: link_check (listen PORT | connect HOST PORT) [send] [recv SECONDS WARMUP]\n");
  return 2;
}

int fail(const char* what) {
  std::fprintf(stderr, "link_check: %s: %s\n", what, std::strerror(errno));
  return 1;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

sockaddr_in address(const char* host, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  if (host != nullptr && inet_pton(AF_INET, host, &addr.sin_addr) != 1) addr.sin_port = 0;
  return addr;
}

int accept_one(int port) {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  if (ls < 0) return -1;
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr = address(nullptr, port);
  if (bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(ls, 1) != 0) {
    close(ls);
    return -1;
  }
  int fd = accept(ls, nullptr, nullptr);
  close(ls);
  return fd;
}

int connect_retrying(const char* host, int port) {
  sockaddr_in addr = address(host, port);
  if (addr.sin_port == 0) {
    errno = EINVAL;
    return -1;
  }
  auto t0 = Clock::now();
  for (;;) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
    int err = errno;
    close(fd);
    errno = err;
    if (seconds_since(t0) > 10) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Writes until told to stop (then half-closes, so the other end's reader sees the end) or until
// the other end goes away, which is a sender's ordinary end.
void send_until(int fd, const std::atomic<bool>& stop) {
  std::vector<char> buf(kChunk, 'x');
  while (!stop.load() && write(fd, buf.data(), buf.size()) > 0) {
  }
  shutdown(fd, SHUT_WR);
}

// Counts the bytes that arrive in the window. On a connection that carries both directions it then
// reads on until the end of the stream (the other side may still be measuring what this side
// sends); on a one-way one it returns, and closing ends the sender. The rate is over the part of
// the window the stream lasted, so a stream that ends a moment early is not under-counted.
int measure(int fd, double seconds, double warmup, bool duplex, std::atomic<bool>& stop) {
  std::vector<char> buf(kChunk);
  Clock::time_point first{};
  bool started = false;
  double counted = 0, last = 0;
  ssize_t n;
  while ((n = read(fd, buf.data(), buf.size())) > 0) {
    if (!started) {
      first = Clock::now();
      started = true;
      continue;
    }
    double t = seconds_since(first);
    if (t >= warmup + seconds) break;
    if (t >= warmup) {
      counted += static_cast<double>(n);
      last = t - warmup;
    }
  }
  stop.store(true);
  while (duplex && n > 0) n = read(fd, buf.data(), buf.size());
  if (!started || last <= 0) {
    std::fprintf(stderr, "link_check: no byte arrived in the window\n");
    return 1;
  }
  std::printf("%.4f %.0f %.2f\n", counted / last / 1e9, counted, last);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  std::size_t i = 0;
  int fd = -1;
  if (args.size() >= 2 && args[0] == "listen") {
    fd = accept_one(std::atoi(args[1].c_str()));
    i = 2;
  } else if (args.size() >= 3 && args[0] == "connect") {
    fd = connect_retrying(args[1].c_str(), std::atoi(args[2].c_str()));
    i = 3;
  } else {
    return usage();
  }
  if (fd < 0) return fail(args[0].c_str());
  bool send = i < args.size() && args[i] == "send";
  if (send) ++i;
  bool recv = i + 3 == args.size() && args[i] == "recv";
  if (!recv && i != args.size()) return usage();
  std::atomic<bool> stop{false};
  if (!recv) {
    if (send) send_until(fd, stop);
    close(fd);
    return 0;
  }
  std::thread writer;
  if (send) writer = std::thread(send_until, fd, std::cref(stop));
  int rc = measure(fd, std::atof(args[i + 1].c_str()), std::atof(args[i + 2].c_str()), send, stop);
  if (writer.joinable()) writer.join();
  close(fd);
  return rc;
}
