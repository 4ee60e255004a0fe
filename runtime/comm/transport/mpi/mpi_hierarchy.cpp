#include "comm/transport/mpi/mpi_hierarchy.hpp"

#include <memory>
#include <utility>

#include "comm/transport/mpi/mpi_peer_transport.hpp"
#include "mpi/mpi.hpp"

namespace dtrain::runtime {

std::vector<char*> map_shared_segments(MPI_Comm comm, int ranks, MPI_Win* window,
                                       std::size_t piece_bytes) {
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  char* mine = nullptr;
  const int rc = MPI_Win_allocate_shared(
      static_cast<MPI_Aint>(ShmAllreduce::segment_bytes(piece_bytes, ranks)), 1, info, comm, &mine,
      window);
  MPI_Info_free(&info);
  check(rc, "init", "MPI_Win_allocate_shared (DTRAIN_SHM=0 allreduces through MPI instead)");
  std::vector<char*> segments(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    MPI_Aint bytes = 0;
    int unit = 0;
    void* base = nullptr;
    check(MPI_Win_shared_query(*window, r, &bytes, &unit, &base), "init", "MPI_Win_shared_query");
    segments[static_cast<std::size_t>(r)] = static_cast<char*>(base);
  }
  ShmAllreduce::init_segment(mine);
  check(MPI_Barrier(comm), "init", "MPI_Barrier");
  return segments;
}

namespace {

// Every rank's host name, by rank. Collective over `comm`.
std::vector<std::string> host_names(MPI_Comm comm, int size, const std::string& host) {
  constexpr std::size_t kHostBytes = 256;
  std::vector<char> mine(kHostBytes, '\0');
  host.copy(mine.data(), kHostBytes - 1);
  std::vector<char> all(kHostBytes * static_cast<std::size_t>(size));
  constexpr int kRecord = static_cast<int>(kHostBytes);
  check(MPI_Allgather(mine.data(), kRecord, MPI_BYTE, all.data(), kRecord, MPI_BYTE, comm), "init",
        "MPI_Allgather");
  std::vector<std::string> hosts;
  for (int r = 0; r < size; ++r) hosts.emplace_back(all.data() + kHostBytes * r);
  return hosts;
}

}  // namespace

MpiNodeWindow set_up_mpi_hierarchy(MPI_Comm comm, int rank, int size, const std::string& host,
                                   AllreduceAlgo algo, bool shm, Router& router) {
  NodeLayout layout = plan_layout(host_names(comm, size, host), rank);
  // The least vote wins, so every rank takes the same path (the window is collective).
  int vote = hierarchy_vote(algo, shm, LinkBackend::kMpi, layout);
  check(MPI_Allreduce(MPI_IN_PLACE, &vote, 1, MPI_INT, MPI_MIN, comm), "init", "MPI_Allreduce");
  MpiNodeWindow node;
  if (vote == 0) return node;
  try {
    check(MPI_Comm_split(comm, layout.node, layout.local_rank, &node.comm), "init",
          "MPI_Comm_split");
    std::vector<char*> segments =
        map_shared_segments(node.comm, layout.local_size, &node.window, Hierarchy::kPieceBytes);
    router.build_hierarchy(std::move(layout), vote, LinkBackend::kMpi, std::move(segments),
                           std::make_unique<MpiPeerTransport>(comm));
  } catch (...) {
    router.release();
    node.free();
    throw;
  }
  return node;
}

void MpiNodeWindow::free() noexcept {
  if (window != MPI_WIN_NULL) MPI_Win_free(&window);
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

}  // namespace dtrain::runtime
