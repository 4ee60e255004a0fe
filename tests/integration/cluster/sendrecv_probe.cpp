// Open MPI's point-to-point rate between two halves of a job, one way and both ways at once.
// bench/link_check.sh runs it on the namespace cluster beside the raw TCP rates, so that a
// shortfall of MPI's transport is not taken for the link's.
//
//   srun --mpi=pmix -N2 --ntasks-per-node=P sendrecv_probe BYTES ITERATIONS
// Rank r pairs with rank (r + n/2) mod n (the other node under a block layout). Rank 0 prints
// "ONE-WAY SENDRECV": the rate of MPI_Send from the first half to MPI_Recv in the second, then of
// MPI_Sendrecv both ways at once, per direction per rank, in GB/s (1e9 B/s).
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

double seconds_for(int iterations, bool both_ways, std::vector<char>& out, std::vector<char>& in) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int peer = (rank + size / 2) % size;
  int n = static_cast<int>(out.size());
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iterations; ++i) {
    if (both_ways) {
      MPI_Sendrecv(out.data(), n, MPI_BYTE, peer, 0, in.data(), n, MPI_BYTE, peer, 0,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank < size / 2) {
      MPI_Send(out.data(), n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    } else {
      MPI_Recv(in.data(), n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return MPI_Wtime() - t0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long bytes = argc == 3 ? std::atol(argv[1]) : 0;
  int iterations = argc == 3 ? std::atoi(argv[2]) : 0;
  if (bytes <= 0 || bytes > (1L << 30) || iterations <= 0 || size % 2 != 0) {
    if (rank == 0) std::fprintf(stderr, "usage: sendrecv_probe BYTES ITERATIONS (even ranks)\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<char> out(static_cast<std::size_t>(bytes), 'x'), in(out.size());
  double one_way = seconds_for(iterations, false, out, in);
  double both = seconds_for(iterations, true, out, in);
  double moved = static_cast<double>(bytes) * iterations;
  if (rank == 0) std::printf("%.4f %.4f\n", moved / one_way / 1e9, moved / both / 1e9);
  MPI_Finalize();
  return 0;
}
