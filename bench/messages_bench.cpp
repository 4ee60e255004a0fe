// Point-to-point messages, all-to-all and sub-communicators (issue 43's speed table), each against
// Open MPI in the same run on the same ranks: ping-pong latency (8 B) and bandwidth (64 MiB) of
// Comm::send/recv against MPI_Send/MPI_Recv (and, for 64 MiB, against one memcpy of as many bytes
// on rank 0: the bound a copy within a node can reach), alltoall of 64 MiB per rank against
// MPI_Alltoall, and the cost of one subgroup() of 2 ranks. Timings to read, never pass/fail (label
// bench):
//   mpirun -n 2 messages_bench    (or -n 4, 8; ranks 0 and 1 ping-pong)
//   mpirun -n 2 messages_bench --latency-only N   (the 8 B figure only, N times in one run: the
//                                                   ratio's spread on a machine whose load moves)
//   mpirun -n 2 messages_bench --bandwidth-only N (the 64 MiB figure and memcpy's, N times)
//   srun --mpi=pmix -N4 messages_bench --nodes [--json FILE]   (ranks on several nodes, against
//                                                   the link's limit: messages_nodes.hpp)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "dtrain/dtrain.hpp"
#include "link_rate.hpp"
#include "messages_nodes.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// One round trip of `bytes` between ranks 0 and 1, `send`/`recv` given; the others idle.
template <typename Send, typename Recv>
double round_trip(int rank, std::size_t bytes, int reps, Send send, Recv recv) {
  std::vector<char> buf(bytes, 1);
  const auto t = Clock::now();
  for (int i = 0; i < reps; ++i) {
    if (rank == 0) {
      send(buf.data(), bytes, 1);
      recv(buf.data(), bytes, 1);
    } else if (rank == 1) {
      recv(buf.data(), bytes, 0);
      send(buf.data(), bytes, 0);
    }
  }
  return seconds_since(t) / reps;
}

constexpr const char* kUsage =
    "usage: messages_bench [--latency-only N | --bandwidth-only N | --nodes [--json FILE]]\n"
    "  ping-pong (8 B and 64 MiB), alltoall and subgroup, each dtrain's against Open MPI's in the\n"
    "  same run (median of 5, alternating); --latency-only N: the 8 B ping-pong only, N times;\n"
    "  --bandwidth-only N: the 64 MiB ping-pong and its memcpy bounds only, N times;\n"
    "  --nodes: send/recv, alltoall(v), gather and scatter across nodes against the link's limit\n";

// --nodes [--json FILE]: true and FILE ("" without), or false when argv holds neither.
std::pair<bool, std::string> nodes_mode(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "--nodes") return {false, ""};
  if (argc == 2) return {true, ""};
  if (argc == 4 && std::string(argv[2]) == "--json") return {true, argv[3]};
  std::fprintf(stderr, "messages_bench: expected --nodes [--json FILE], got:");
  for (int i = 1; i < argc; ++i) std::fprintf(stderr, " %s", argv[i]);
  std::fprintf(stderr, "\n%s", kUsage);
  std::exit(2);
}

// What to time: every figure once (rounds 0), or the 8 B or the 64 MiB ping-pong `rounds` times.
struct Only {
  int rounds = 0;
  bool bandwidth = false;
};

// The command line's Only, or exits naming what was wrong.
Only parse_only(int argc, char** argv) {
  if (argc == 1) return {};
  const std::string flag = argv[1];
  if (flag == "--help" || flag == "-h") {
    std::fputs(kUsage, stdout);
    std::exit(0);
  }
  const bool known = flag == "--latency-only" || flag == "--bandwidth-only";
  char* end = nullptr;
  const long n = argc == 3 && known ? std::strtol(argv[2], &end, 10) : 0;
  if (n < 1 || n > 1000 || end == nullptr || *end != '\0') {
    std::fprintf(stderr,
                 "messages_bench: expected --latency-only N or --bandwidth-only N (N from 1 to "
                 "1000), got:");
    for (int i = 1; i < argc; ++i) std::fprintf(stderr, " %s", argv[i]);
    std::fprintf(stderr, "\n%s", kUsage);
    std::exit(2);
  }
  return {static_cast<int>(n), flag == "--bandwidth-only"};
}

// One memcpy of `bytes` in this process, the bound a copy within a node can reach: warm (both
// buffers written before, as a ping-pong's are after its first round trip), and cold (into
// memory never touched, so the copy also takes its page faults). Median of 5 each, in seconds.
std::pair<double, double> memcpy_times(std::size_t bytes) {
  std::vector<char> from(bytes, 3), to(bytes, 4);
  std::vector<double> warm, cold;
  for (int k = 0; k < 5; ++k) {
    auto t = Clock::now();
    std::memcpy(to.data(), from.data(), bytes);
    warm.push_back(seconds_since(t));
    // new char[] leaves the pages untouched (std::vector would zero them first).
    std::unique_ptr<char[]> fresh(new char[bytes]);
    t = Clock::now();
    std::memcpy(fresh.get(), from.data(), bytes);
    cold.push_back(seconds_since(t));
  }
  std::nth_element(warm.begin(), warm.begin() + 2, warm.end());
  std::nth_element(cold.begin(), cold.begin() + 2, cold.end());
  return {warm[2], cold[2]};
}

// --nodes: messages_nodes() on this job's nodes; 1 if a result was wrong.
int across_nodes(dtrain::Context& ctx, const std::string& json_path) {
  dtrain::Comm& c = ctx.comm();
  if (c.rank() == 0) {
    std::printf(
        "# messages_bench --nodes: %d ranks, libdtrain %s backend (allreduce: %s), "
        "bootstrap %s, load %s\n",
        c.size(), std::string(c.backend()).c_str(), std::string(c.allreduce_transport()).c_str(),
        ctx.world().bootstrap.c_str(), coll_bench::load_average().c_str());
  }
  coll_bench::messages_nodes(c, coll_bench::host_names());
  if (c.rank() == 0 && !json_path.empty()) {
    std::ofstream(json_path) << coll_bench::report.dump(2) << "\n";
  }
  c.barrier();
  MPI_Finalize();
  return coll_bench::total_wrong > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto [nodes, json_path] = nodes_mode(argc, argv);
  const Only only = nodes ? Only{} : parse_only(argc, argv);
  dtrain::Context ctx = dtrain::init();
  int started = 0;
  MPI_Initialized(&started);
  if (started == 0) MPI_Init(nullptr, nullptr);
  dtrain::Comm& c = ctx.comm();
  const int rank = c.rank();
  const int size = c.size();
  coll_bench::rank = rank;
  coll_bench::size = size;
  if (nodes) return across_nodes(ctx, json_path);
  if (rank == 0) {
    std::printf("# messages_bench: %d ranks, dtrain backend %s; each figure the median of 5\n",
                size, std::string(c.backend()).c_str());
  }
  const auto dtrain_send = [&](void* b, std::size_t n, int peer) {
    c.send(b, n, dtrain::DType::kUInt8, peer, 0);
  };
  const auto dtrain_recv = [&](void* b, std::size_t n, int peer) {
    c.recv(b, n, dtrain::DType::kUInt8, peer, 0);
  };
  const auto mpi_send = [&](void* b, std::size_t n, int peer) {
    MPI_Send(b, static_cast<int>(n), MPI_BYTE, peer, 0, MPI_COMM_WORLD);
  };
  const auto mpi_recv = [&](void* b, std::size_t n, int peer) {
    MPI_Recv(b, static_cast<int>(n), MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  };
  std::vector<std::pair<std::size_t, int>> figures = {{8, 2000}, {std::size_t{64} << 20, 10}};
  if (only.rounds > 0) {
    const auto figure = only.bandwidth ? figures[1] : figures[0];
    figures.assign(static_cast<std::size_t>(only.rounds), figure);
  }
  for (const auto& [bytes, reps] : figures) {
    std::vector<double> d, m;
    for (int k = 0; k < 5; ++k) {
      c.barrier();
      d.push_back(round_trip(rank, bytes, reps, dtrain_send, dtrain_recv));
      MPI_Barrier(MPI_COMM_WORLD);
      m.push_back(round_trip(rank, bytes, reps, mpi_send, mpi_recv));
    }
    std::nth_element(d.begin(), d.begin() + 2, d.end());
    std::nth_element(m.begin(), m.begin() + 2, m.end());
    if (rank == 0 && bytes > 8) {
      const auto [warm, cold] = memcpy_times(bytes);
      std::printf(
          "memcpy    %9zu B: warm %10.2f us (%7.3f GB/s), cold %10.2f us (%7.3f GB/s); dtrain's "
          "bandwidth / memcpy's: warm %.2f, cold %.2f\n",
          bytes, warm * 1e6, static_cast<double>(bytes) / warm / 1e9, cold * 1e6,
          static_cast<double>(bytes) / cold / 1e9, warm / (d[2] / 2), cold / (d[2] / 2));
    }
    if (rank == 0) {
      const double dt = d[2] / 2;
      const double mt = m[2] / 2;
      std::printf(
          "ping-pong %9zu B: dtrain %10.2f us (%7.3f GB/s), MPI %10.2f us (%7.3f GB/s), "
          "dtrain/MPI time %.2f (load %s)\n",
          bytes, dt * 1e6, static_cast<double>(bytes) / dt / 1e9, mt * 1e6,
          static_cast<double>(bytes) / mt / 1e9, dt / mt, coll_bench::load_average().c_str());
    }
  }
  if (only.rounds > 0) {
    c.barrier();
    MPI_Finalize();
    return 0;
  }
  // alltoall, 64 MiB per rank (64 MiB / size to each).
  const std::size_t per_rank = (std::size_t{64} << 20) / static_cast<std::size_t>(size);
  std::vector<char> in(per_rank * static_cast<std::size_t>(size), 2);
  std::vector<char> out(in.size());
  std::vector<double> d, m;
  for (int k = 0; k < 5; ++k) {
    c.barrier();
    auto t = Clock::now();
    c.alltoall(in.data(), out.data(), per_rank, dtrain::DType::kUInt8);
    d.push_back(seconds_since(t));
    MPI_Barrier(MPI_COMM_WORLD);
    t = Clock::now();
    MPI_Alltoall(in.data(), static_cast<int>(per_rank), MPI_BYTE, out.data(),
                 static_cast<int>(per_rank), MPI_BYTE, MPI_COMM_WORLD);
    m.push_back(seconds_since(t));
  }
  std::nth_element(d.begin(), d.begin() + 2, d.end());
  std::nth_element(m.begin(), m.begin() + 2, m.end());
  if (rank == 0) {
    std::printf(
        "alltoall 64 MiB per rank: dtrain %.2f ms, MPI_Alltoall %.2f ms, dtrain/MPI time "
        "%.2f\n",
        d[2] * 1e3, m[2] * 1e3, d[2] / m[2]);
  }
  // subgroup(): 256 groups of 2 (rank r with r ^ 1), each used for one allreduce.
  c.barrier();
  const auto t = Clock::now();
  constexpr int kGroups = 256;
  for (int i = 0; i < kGroups; ++i) {
    const int peer = rank ^ 1;
    if (peer >= size) break;
    const std::vector<int> pair = {std::min(rank, peer), std::max(rank, peer)};
    std::optional<dtrain::Comm> g = c.subgroup(pair);
    std::int32_t x = 1;
    g->allreduce(&x, &x, 1, dtrain::DType::kInt32, dtrain::ReduceOp::kSum);
  }
  const double groups = seconds_since(t);
  if (rank == 0) {
    std::printf("subgroup: %d groups of 2, each made and used once: %.3f s (%.3f ms a group)\n",
                kGroups, groups, groups * 1e3 / kGroups);
  }
  c.barrier();
  MPI_Finalize();
  return 0;
}
