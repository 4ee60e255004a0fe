#include "link_rate.hpp"

#include <unistd.h>

#include <algorithm>
#include <string>

#include "bench_common.hpp"

namespace coll_bench {

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
std::vector<char> host_names() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::vector<char> hosts(static_cast<std::size_t>(size) * 256);
  MPI_Allgather(host, 256, MPI_CHAR, hosts.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
  return hosts;
}

}  // namespace coll_bench
