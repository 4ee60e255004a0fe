// What the call check's 16-byte header (comm/call_check.hpp) costs the TCP backend's messages:
// one exchange of N bytes each way between two threads over a loopback TCP connection (the
// sockets, TCP stack and net::exchange the collectives use), with the header and without it,
// alternating in blocks in the same run, so both see the same machine state. Prints the median
// round trip of each and their ratio per size. A report, never a pass/fail on time.
//   call_header_bench [ROUNDS]   (default 4000 per variant and size)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "comm/call_check.hpp"
#include "net/socket.hpp"

namespace {

using dtrain::runtime::net::Clock;
using dtrain::runtime::net::Framed;
using dtrain::runtime::net::IoResult;

// One exchange of `bytes` each way on `fd`, with or without the header.
void exchange(int fd, std::vector<char>& out, std::vector<char>& in, bool header,
              const dtrain::runtime::CallHeader& call) {
  Framed o;
  Framed i;
  if (header) {
    std::memcpy(o.header.data(), &call, sizeof call);
    o.header_len = i.header_len = sizeof call;
  }
  o.data = out.data();
  o.data_len = out.size();
  i.data = in.data();
  i.data_len = in.size();
  int failed = -1;
  const IoResult r = dtrain::runtime::net::exchange(
      fd, o, fd, i, header ? &call : nullptr, Clock::now() + std::chrono::seconds(10), &failed);
  if (r != IoResult::kOk) {
    std::fprintf(stderr, "call_header_bench: exchange failed (%d)\n", static_cast<int>(r));
    std::exit(1);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 4000;
  if (rounds < 10) {
    std::fprintf(stderr, "call_header_bench: ROUNDS must be at least 10, got %s\n", argv[1]);
    return 2;
  }
  using namespace dtrain::runtime;
  net::Socket listener = net::listen_on("127.0.0.1", 0);
  const int port = net::local_port(listener);
  net::Socket near;
  std::thread connector([&] {
    near = net::connect_until("127.0.0.1", port, Clock::now() + std::chrono::seconds(10), "bench");
  });
  net::Socket far = net::accept_until(listener, Clock::now() + std::chrono::seconds(10));
  connector.join();
  const CallHeader call = CallHeader::of(1024, CallWhat{});
  std::printf("%10s %14s %14s %8s\n", "bytes", "plain us", "header us", "ratio");
  for (const std::size_t bytes : {std::size_t{64}, std::size_t{4096}, std::size_t{65536}}) {
    std::vector<char> a_out(bytes, 1), a_in(bytes), b_out(bytes, 2), b_in(bytes);
    const int per_block = 100;
    std::vector<double> times[2];
    for (int done = 0; done < rounds; done += per_block) {
      for (int header = 0; header < 2; ++header) {
        std::thread peer([&] {
          for (int r = 0; r < per_block; ++r) exchange(far.fd(), b_out, b_in, header, call);
        });
        for (int r = 0; r < per_block; ++r) {
          const auto t0 = Clock::now();
          exchange(near.fd(), a_out, a_in, header, call);
          times[header].push_back(
              std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        }
        peer.join();
      }
    }
    const double plain = median(times[0]);
    const double framed = median(times[1]);
    std::printf("%10zu %14.2f %14.2f %8.3f\n", bytes, plain, framed, framed / plain);
  }
  return 0;
}
