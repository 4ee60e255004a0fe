// Broadcast time through the host communicator, as a program sees it (dtrain::init, then
// Comm::broadcast): for 8 B, 4 KiB and 16 MiB, five repetitions of N calls after a barrier, from
// root 0 ("root 0": a root that waits for nobody may run ahead of the others) and from a root
// that moves on each call ("rotating": every rank receives in turn, so each call waits for the
// one before); rank 0 prints the median, fastest and slowest per-call time of the five. Launched
// torchrun-style (tests/integration/runtime/tcp_launch.sh) it measures the TCP backend's tree and
// the agreement round before it (docs/benchmarks.md, "The TCP broadcast's agreement round").
// Built against the public API only, so the same file builds against an older tree's libdtrain
// for a comparison. A report, never a pass/fail on time.
//   tcp_launch.sh N broadcast_bench
#include <dtrain/dtrain.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

int main() {
  dtrain::Context ctx = dtrain::init();
  dtrain::Comm& comm = ctx.comm();
  for (const std::size_t bytes : {std::size_t{8}, std::size_t{4096}, std::size_t{16} << 20}) {
    std::vector<char> buf(bytes, 1);
    const int calls = bytes >= (std::size_t{1} << 20) ? 20 : 2000;
    for (int i = 0; i < calls / 10 + 2; ++i) {
      comm.broadcast(buf.data(), bytes, dtrain::DType::kUInt8, i % comm.size());
    }
    for (const bool rotating : {false, true}) {
      std::vector<double> reps;
      for (int rep = 0; rep < 5; ++rep) {
        comm.barrier();
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) {
          comm.broadcast(buf.data(), bytes, dtrain::DType::kUInt8, rotating ? i % comm.size() : 0);
        }
        const std::chrono::duration<double, std::micro> took =
            std::chrono::steady_clock::now() - start;
        reps.push_back(took.count() / calls);
      }
      std::sort(reps.begin(), reps.end());
      if (comm.rank() == 0) {
        std::printf("%s ranks %d bytes %zu %s: median %.2f us, fastest %.2f, slowest %.2f\n",
                    std::string(comm.backend()).c_str(), comm.size(), bytes,
                    rotating ? "rotating" : "root 0", reps[2], reps[0], reps[4]);
      }
    }
  }
  return 0;
}
