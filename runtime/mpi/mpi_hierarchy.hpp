// The hierarchical collectives on the MPI backend (comm/hierarchy.hpp): each node's
// ranks share an MPI window for the node's reduction, and MPI point-to-point messages carry the
// shares between nodes. Apart from mpi_communicator.cpp, which only decides when to use it; the
// shared window is also the single-node allreduce's.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/hierarchy.hpp"
#include "comm/shm_allreduce.hpp"
#include "mpi/mpi_api.hpp"
#include "mpi/mpi_peer_transport.hpp"
#include "settings.hpp"

namespace dtrain::runtime {

// A shared window over `comm` (the ranks of one node, `ranks` of them) with a ShmAllreduce
// segment of `piece_bytes` pieces per rank, each prepared (and so first touched, NUMA-local) by
// its owner before anyone uses it; the segments by rank. Collective over `comm`.
std::vector<char*> map_shared_segments(MPI_Comm comm, int ranks, MPI_Win* window,
                                       std::size_t piece_bytes = ShmAllreduce::kPieceBytes);

class MpiHierarchy {
 public:
  // Collective over `comm` (ranks as the job numbers them): from every rank's host name, the
  // layout; the hierarchy when it and DTRAIN_ALGO (`algo`; `shm`: DTRAIN_SHM allows shared
  // memory, kAuto only) want it, on every rank or none (nullptr). `poll` is called while the
  // allreduce waits and may throw; it and `comm` must outlive the hierarchy.
  static std::unique_ptr<MpiHierarchy> create(MPI_Comm comm, int rank, int size,
                                              const std::string& host, AllreduceAlgo algo, bool shm,
                                              std::function<void()> poll);
  MpiHierarchy(const MpiHierarchy&) = delete;
  MpiHierarchy& operator=(const MpiHierarchy&) = delete;
  // Frees nothing of MPI's: a call abandoned inside MPI would hang there (free_mpi()).
  ~MpiHierarchy() = default;

  // As Hierarchy's.
  bool takes(Collective op, std::size_t bytes) const { return hier_->takes(op, bytes); }
  bool carries(Collective op) const { return hier_->carries(op); }
  void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op) {
    hier_->allreduce(in, out, count, type, op);
  }
  void reduce_scatter(const void* in, void* out, std::size_t count, DType type, ReduceOp op) {
    hier_->reduce_scatter(in, out, count, type, op);
  }
  void allgather(const void* in, void* out, std::size_t bytes) { hier_->allgather(in, out, bytes); }
  std::string missing_ranks() const { return hier_->missing_ranks(); }
  // Frees the node's window and communicator; while MPI is up, before MPI_Comm_free of `comm`.
  void free_mpi() noexcept;

 private:
  MpiHierarchy() = default;

  MPI_Comm node_comm_ = MPI_COMM_NULL;  // the node's ranks, by local rank
  MPI_Win node_window_ = MPI_WIN_NULL;
  std::function<void()> poll_;
  std::unique_ptr<MpiPeerTransport> peers_;
  std::unique_ptr<ShmAllreduce> node_shm_;
  std::unique_ptr<Hierarchy> hier_;
};

}  // namespace dtrain::runtime
