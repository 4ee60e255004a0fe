// The backend side of dtrain::Comm: one abstract Communicator, one implementation per backend
// (single process, MPI), chosen by init(). The public Comm validates arguments (null buffers,
// overlap, kAvg on integers, root range) before a backend sees them, so backends only move data.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

class Communicator {
 public:
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  virtual ~Communicator() = default;

  // `in == out` is in place. kAvg arrives only for floating types.
  virtual void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op) = 0;
  virtual void broadcast(void* buf, std::size_t count, DType type, int root) = 0;
  virtual void barrier() = 0;
  virtual std::string_view backend() const = 0;
};

// One rank: an allreduce copies `in` to `out`, a broadcast and a barrier do nothing.
std::unique_ptr<Communicator> make_single_communicator();

// MPI over host memory, for a world of more than one rank. Initializes MPI when the process has
// not (and then finalizes it on destruction); checks that MPI sees the same rank and size as the
// bootstrap. Throws Error (kComm) when MPI fails.
std::unique_ptr<Communicator> make_mpi_communicator(const WorldInfo& world);

// True once MPI_Finalize has run in this process: MPI cannot start again, so neither can a
// multi-rank Context (nor, in practice, a PMIx session: its job data are gone).
bool mpi_finalized();
// Throws the Error that says so, with `detail` (a later failure it explains) appended.
[[noreturn]] void throw_finalized(const std::string& detail);

}  // namespace dtrain::runtime
