// The MPI backend's side of the shared-memory paths (comm/router.hpp): the node's shared window
// (MPI_Win_allocate_shared), for the single-node allreduce and the hierarchy's node reduction,
// and the hierarchy's set-up, whose link between nodes is MPI point to point
// (mpi_peer_transport.hpp). Apart from mpi_communicator.cpp, which only calls them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "comm/router.hpp"
#include "comm/transport/shm/shm_allreduce.hpp"
#include "mpi/mpi_api.hpp"
#include "settings.hpp"

namespace dtrain::runtime {

// A shared window over `comm` (the ranks of one node, `ranks` of them) with a ShmAllreduce
// segment of `piece_bytes` pieces per rank, each prepared (and so first touched, NUMA-local) by
// its owner before anyone uses it; the segments by rank. Collective over `comm`.
std::vector<char*> map_shared_segments(MPI_Comm comm, int ranks, MPI_Win* window,
                                       std::size_t piece_bytes = ShmAllreduce::kPieceBytes);

// The node's communicator and window under the hierarchy's node reduction. Freed by free(),
// after Router::release() and while MPI is up, before MPI_Comm_free of the job's communicator;
// never when a call was abandoned inside MPI (it would hang there).
struct MpiNodeWindow {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Win window = MPI_WIN_NULL;
  void free() noexcept;
};

// Collective over `comm` (ranks as the job numbers them): from every rank's host name, the
// layout; when it and DTRAIN_ALGO (`algo`; `shm`: DTRAIN_SHM allows shared memory, kAuto only)
// want the hierarchy, on every rank or none, builds it in `router` over the node's window and MPI
// point to point. Returns the window (empty when no hierarchy was built).
MpiNodeWindow set_up_mpi_hierarchy(MPI_Comm comm, int rank, int size, const std::string& host,
                                   AllreduceAlgo algo, bool shm, Router& router);

}  // namespace dtrain::runtime
