// dtrain's own allreduce for small messages (recursive doubling), apart from the transport that
// moves its bytes: the MPI communicator plugs in nonblocking point-to-point messages, and the
// unit test plugs in threads, so the algorithm is tested without mpirun.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

class RecursiveDoubling {
 public:
  // Sends `send_bytes` from `send` to rank `to` and receives `recv_bytes` into `recv` from rank
  // `from` (a rank of -1: no such message), returning once both are done. May throw to abandon
  // the call.
  using Transfer = std::function<void(const void* send, std::size_t send_bytes, int to, void* recv,
                                      std::size_t recv_bytes, int from)>;

  RecursiveDoubling(int rank, int size, Transfer transfer)
      : rank_(rank), size_(size), transfer_(std::move(transfer)) {}

  // Every rank calls it with the same n, type and op; `in == out` is in place. kAvg sums. Every
  // rank ends with the same bits: each exchange combines (lower rank's data) op (higher rank's).
  void allreduce(const void* in, void* out, std::size_t n, DType type, ReduceOp op);

 private:
  int rank_;
  int size_;
  Transfer transfer_;
  std::vector<char> scratch_;  // the peer's data; kept across calls
};

}  // namespace dtrain::runtime
