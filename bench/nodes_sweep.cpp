#include "nodes_sweep.hpp"

#include <algorithm>
#include <cstdio>
#include <dtrain/bandwidth.hpp>
#include <string>
#include <utility>

#include "bench_common.hpp"

namespace coll_bench {
namespace {

// The lowest rank on another host than rank 0's, -1 when every rank is on rank 0's; and the
// number of hosts.
std::pair<int, int> other_node(const std::vector<char>& hosts) {
  int other = -1;
  std::vector<std::string> seen;
  for (int r = 0; r < size; ++r) {
    const std::string h(&hosts[static_cast<std::size_t>(r) * 256]);
    if (other < 0 && h != std::string(&hosts[0])) other = r;
    if (std::find(seen.begin(), seen.end(), h) == seen.end()) seen.push_back(h);
  }
  return {other, static_cast<int>(seen.size())};
}

// GB/s from rank 0 to `peer` (one way) and each way while both send (MPI_Sendrecv), 64 MiB in
// 4 MiB messages, median of 3; every rank returns rank 0's figures.
std::pair<double, double> link_rates(int peer) {
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  constexpr std::size_t kMessage = std::size_t{4} << 20;
  std::vector<char> out(kBytes, 1);
  std::vector<char> in(kBytes);
  const bool mine = rank == 0 || rank == peer;
  const int other = rank == 0 ? peer : 0;
  const auto run = [&](bool both) {
    std::vector<double> t;
    for (int i = 0; i < 4; ++i) {  // the first is a warm-up
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      if (mine) {
        for (std::size_t d = 0; d < kBytes; d += kMessage) {
          const int n = static_cast<int>(kMessage);
          if (both) {
            MPI_Sendrecv(out.data() + d, n, MPI_BYTE, other, 1, in.data() + d, n, MPI_BYTE, other,
                         1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          } else if (rank == 0) {
            MPI_Send(out.data() + d, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
          } else {
            MPI_Recv(in.data() + d, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          }
        }
        // One way: done when the receiver has it all.
        if (!both && rank == peer) MPI_Send(in.data(), 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        if (!both && rank == 0)
          MPI_Recv(in.data(), 1, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      if (i > 0) t.push_back(MPI_Wtime() - start);
    }
    std::sort(t.begin(), t.end());
    double rate = static_cast<double>(kBytes) / t[1] / 1e9;
    MPI_Bcast(&rate, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return rate;
  };
  const double one_way = run(false);
  return {one_way, run(true)};
}
}  // namespace

void nodes_sweep(dtrain::Comm& comm, dtrain::Comm& flat, std::size_t max_bytes,
                 const std::vector<char>& hosts) {
  const auto [peer, nodes] = other_node(hosts);
  double one_way = 0;
  double both = 0;
  if (peer > 0) std::tie(one_way, both) = link_rates(peer);
  // A node sends at least 2 (N - 1) / N of the message (the bandwidth-optimal lower bound).
  const double node_share = nodes > 1 ? 2.0 * (nodes - 1) / nodes : 0;
  const double bus = dtrain::allreduce_bus_factor(size);
  if (rank == 0) {
    std::printf(
        "# link rank 0 -> rank %d (MPI, 64 MiB): one-way %.4f GB/s, both ways at once %.4f "
        "GB/s each (%.2f x one-way)\n",
        peer, one_way, both, one_way > 0 ? both / one_way : 0);
    std::printf("# limit = %.2f x S / one-way rate (%d nodes); lim/d = limit / dtrain time\n",
                node_share, nodes);
    std::printf("# allreduce float32 sum, out of place, tuned malloc; time us, busbw GB/s\n");
    std::printf("#%11s | %9s %7s | %9s %7s | %9s %7s | %9s %6s | %7s %7s %6s\n", "size", "dtrain",
                "busbw", "d-flat", "busbw", "mpi-tuned", "busbw", "limit", "lim/d", "mpi/d",
                "flat/d", "#wrong");
    report["nodes"] = {{"nodes", nodes},
                       {"one_way_GBps", one_way},
                       {"both_ways_GBps", both},
                       {"transport", std::string(comm.allreduce_transport())},
                       {"sweep", nlohmann::json::array()}};
  }
  for (std::size_t bytes = 4096; bytes <= max_bytes; bytes *= 4) {
    const std::size_t n = bytes / sizeof(float);
    std::vector<float> in(n);
    std::vector<float> out(n);
    fill(in);
    const auto dtrain_with = [&](dtrain::Comm& c) {
      std::fill(out.begin(), out.end(), -1.0f);
      const double t = measure([&] {
        c.allreduce(in.data(), out.data(), n, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum);
      });
      return std::pair<double, long long>(t, wrong(out));
    };
    const auto [d, d_wrong] = dtrain_with(comm);
    const auto [f, f_wrong] = dtrain_with(flat);
    const double m = measure([&] {
      MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    });
    long long bad = d_wrong + f_wrong + wrong(out);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    total_wrong += rank == 0 ? bad : 0;
    if (rank != 0) continue;
    const double limit = one_way > 0 ? node_share * static_cast<double>(bytes) / one_way / 1e9 : 0;
    const auto bw = [&](double t) { return static_cast<double>(bytes) / t / 1e9 * bus; };
    std::printf(
        "%12zu | %9.1f %7.4f | %9.1f %7.4f | %9.1f %7.4f | %9.1f %6.2f | %7.2f %7.2f %6lld\n",
        bytes, d * 1e6, bw(d), f * 1e6, bw(f), m * 1e6, bw(m), limit * 1e6, limit / d, m / d, f / d,
        bad);
    std::fflush(stdout);
    report["nodes"]["sweep"].push_back({{"bytes", bytes},
                                        {"dtrain_us", d * 1e6},
                                        {"dtrain_flat_us", f * 1e6},
                                        {"mpi_tuned_us", m * 1e6},
                                        {"limit_us", limit * 1e6},
                                        {"wrong", bad}});
  }
  if (rank == 0)
    std::printf("# mpi/d, flat/d: their time over dtrain's (above 1: dtrain faster)\n");
}

}  // namespace coll_bench
