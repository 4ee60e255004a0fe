#include "comm/transport/mpi/mpi_node_setup.hpp"

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

std::int32_t MpiNodeSetup::least(std::int32_t value) {
  check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT32_T, MPI_MIN, comm_), "init",
        "MPI_Allreduce");
  return value;
}

std::vector<std::string> MpiNodeSetup::hosts() {
  constexpr std::size_t kHostBytes = 256;
  std::vector<char> mine(kHostBytes, '\0');
  host_.copy(mine.data(), kHostBytes - 1);
  std::vector<char> all(kHostBytes * static_cast<std::size_t>(size_));
  constexpr int kRecord = static_cast<int>(kHostBytes);
  check(MPI_Allgather(mine.data(), kRecord, MPI_BYTE, all.data(), kRecord, MPI_BYTE, comm_), "init",
        "MPI_Allgather");
  std::vector<std::string> hosts;
  for (int r = 0; r < size_; ++r) hosts.emplace_back(all.data() + kHostBytes * r);
  return hosts;
}

std::vector<char*> MpiNodeSetup::map_node(const std::vector<int>& members,
                                          std::size_t piece_bytes) {
  const int ranks = static_cast<int>(members.size());
  if (ranks == size_) return map_shared_segments(comm_, ranks, &window_.window, piece_bytes);
  // The node's lowest rank names it; its ranks keep the job's order.
  check(MPI_Comm_split(comm_, members.front(), rank_, &window_.comm), "init", "MPI_Comm_split");
  return map_shared_segments(window_.comm, ranks, &window_.window, piece_bytes);
}

std::unique_ptr<PeerTransport> MpiNodeSetup::make_link(const NodeLayout& layout) {
  (void)layout;  // MPI reaches every rank already
  return std::make_unique<MpiPeerTransport>(comm_);
}

void MpiNodeWindow::free() noexcept {
  if (window != MPI_WIN_NULL) MPI_Win_free(&window);
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

}  // namespace dtrain::runtime
