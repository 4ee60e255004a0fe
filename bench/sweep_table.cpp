#include "sweep_table.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "bench_common.hpp"

namespace coll_bench {
namespace {

void print_header(const Collective& op) {
  std::printf("#\n# %s; time us, busbw GB/s\n", op.title.c_str());
  std::printf("# limit = %.2f x S / one-way rate (%s); lim/d = limit / dtrain time\n",
              op.link_share, op.limit_why.c_str());
  std::printf("#%11s | %9s %7s | %9s %7s | %9s %7s | %9s %6s | %7s %7s %6s\n", "size", "dtrain",
              "busbw", "d-flat", "busbw", "mpi-tuned", "busbw", "limit", "lim/d", "mpi/d", "flat/d",
              "#wrong");
}

}  // namespace

void sweep_table(const Collective& op, dtrain::Comm& comm, dtrain::Comm& flat,
                 std::size_t max_bytes, double one_way) {
  const auto ranks = static_cast<std::size_t>(size);
  if (rank == 0) {
    print_header(op);
    report["nodes"][op.json_key] = nlohmann::json::array();
  }
  for (std::size_t s = op.first_bytes; s <= max_bytes; s *= 4) {
    const std::size_t total = s / sizeof(float) / ranks * ranks;
    const std::size_t bytes = total * sizeof(float);
    std::vector<float> in(op.in_is_block ? total / ranks : total);
    std::vector<float> out(op.out_is_block ? total / ranks : total);
    fill(in);
    // Each call starts from an output that is wrong everywhere, so each check is its own.
    const auto timed = [&](const std::function<void()>& call) {
      std::fill(out.begin(), out.end(), -1.0f);
      const double t = measure(call);
      return std::pair<double, long long>(t, op.wrong(out, total));
    };
    const std::function<void()> calls[] = {[&] { op.run(comm, in.data(), out.data(), total); },
                                           [&] { op.run(flat, in.data(), out.data(), total); },
                                           [&] { op.run_mpi(in.data(), out.data(), total); }};
    // The first size's first column ran up to 1.4 x slower than the same path in the next
    // column in some runs (after the link test's 64 MiB both ways): each column is warmed up once
    // per table, untimed.
    if (s == op.first_bytes) {
      for (const auto& call : calls) measure(call);
    }
    const auto [d, d_wrong] = timed(calls[0]);
    const auto [f, f_wrong] = timed(calls[1]);
    const auto [m, m_wrong] = timed(calls[2]);
    long long bad = d_wrong + f_wrong + m_wrong;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    total_wrong += rank == 0 ? bad : 0;
    if (rank != 0) continue;
    const double limit =
        one_way > 0 ? op.link_share * static_cast<double>(bytes) / one_way / 1e9 : 0;
    const auto bw = [&](double t) { return static_cast<double>(bytes) / t / 1e9 * op.bus_factor; };
    std::printf(
        "%12zu | %9.1f %7.4f | %9.1f %7.4f | %9.1f %7.4f | %9.1f %6.2f | %7.2f %7.2f %6lld\n",
        bytes, d * 1e6, bw(d), f * 1e6, bw(f), m * 1e6, bw(m), limit * 1e6, limit / d, m / d, f / d,
        bad);
    std::fflush(stdout);
    report["nodes"][op.json_key].push_back({{"bytes", bytes},
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
