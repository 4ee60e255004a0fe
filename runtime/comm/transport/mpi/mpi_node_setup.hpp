// The MPI backend's collective set-up steps (comm/router.hpp, NodeSetup): the votes' minimum by
// MPI_Allreduce, the node's shared window (MPI_Win_allocate_shared) under the single-node
// allreduce or the hierarchy's node reduction, and the hierarchy's link, MPI point to point
// (mpi_peer_transport.hpp). Apart from mpi_communicator.cpp, which only hands them to the router.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/router.hpp"
#include "comm/transport/shm/shm_allreduce.hpp"
#include "mpi/mpi_api.hpp"

namespace dtrain::runtime {

// A shared window over `comm` (the ranks of one node, `ranks` of them) with a ShmAllreduce
// segment of `piece_bytes` pieces per rank, each prepared (and so first touched, NUMA-local) by
// its owner before anyone uses it; the segments by rank. Collective over `comm`.
std::vector<char*> map_shared_segments(MPI_Comm comm, int ranks, MPI_Win* window,
                                       std::size_t piece_bytes = ShmAllreduce::kPieceBytes);

// The communicator and window under the router's shared-memory paths. Freed by free(), after
// Router::release() and while MPI is up, before MPI_Comm_free of the job's communicator; never
// when a call was abandoned inside MPI (it would hang there).
struct MpiNodeWindow {
  MPI_Comm comm = MPI_COMM_NULL;  // this node's ranks, split from the job's (none: the job's own)
  MPI_Win window = MPI_WIN_NULL;
  void free() noexcept;
};

// The steps over `comm` (ranks as the job numbers them; this rank `rank` on `host`), the node's
// memory mapped into `window`, which outlives the router's use of it.
class MpiNodeSetup final : public NodeSetup {
 public:
  MpiNodeSetup(MPI_Comm comm, int rank, int size, std::string host, MpiNodeWindow& window)
      : comm_(comm), rank_(rank), size_(size), host_(std::move(host)), window_(window) {}
  std::int32_t least(std::int32_t value) override;
  std::vector<std::string> hosts() override;
  // Every rank of the job: a window over `comm` itself; else each node's ranks split apart.
  std::vector<char*> map_node(const std::vector<int>& members, std::size_t piece_bytes) override;
  std::unique_ptr<PeerTransport> make_link(const NodeLayout& layout) override;

 private:
  MPI_Comm comm_;
  int rank_;
  int size_;
  std::string host_;
  MpiNodeWindow& window_;
};

}  // namespace dtrain::runtime
