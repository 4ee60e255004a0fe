// The hierarchical collectives' link between nodes over MPI point-to-point messages
// (comm/algorithms/hierarchy.hpp): nonblocking sends and receives per pipeline slot, tested by
// polling so the allreduce can keep its deadline and overlap the node's work with the transfer.
#pragma once

#include <array>
#include <vector>

#include "comm/algorithms/hierarchy.hpp"
#include "mpi/mpi_api.hpp"

namespace dtrain::runtime {

class MpiPeerTransport final : public PeerTransport {
 public:
  // `comm`: ranks as the layout numbers them; it must outlive this object.
  explicit MpiPeerTransport(MPI_Comm comm) : comm_(comm) {}
  ~MpiPeerTransport() override;

  void send(int slot, const void* buf, std::size_t bytes, int peer) override;
  void recv(int slot, void* buf, std::size_t bytes, int peer) override;
  bool done(int slot) override;
  std::vector<int> waiting(int slot) const override;
  // Lets MPI move the messages of every slot (called while the node's ranks wait on each other).
  void progress() override;

 private:
  struct Slot {
    std::vector<MPI_Request> requests;
    std::vector<int> peers;  // one per request; -1 for a send
  };
  static int as_count(std::size_t bytes);
  MPI_Comm comm_;
  std::array<Slot, Hierarchy::kDepth> slots_;
  std::vector<int> indices_;  // MPI_Testsome's output, kept across calls
};

}  // namespace dtrain::runtime
