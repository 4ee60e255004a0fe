// How dtrain's element types and reductions reach MPI's collectives: the MPI datatype of each
// DType, and the MPI op that reduces a type as dtrain's own kernels do (MPI's own ops, except for
// uint8, reduced by dtrain's kernels as user-defined ops). Apart from mpi_communicator.cpp, which
// only looks them up.
#pragma once

#include <array>

#include "dtrain/dtrain.hpp"
#include "mpi/mpi_api.hpp"

namespace dtrain::runtime {

MPI_Datatype mpi_type(DType type);

// The user-defined ops for uint8, created with MPI's communicator and freed before MPI ends.
class MpiOps {
 public:
  // Throws (through check) when MPI refuses an op.
  void create();
  void free() noexcept;
  // The MPI op for `op` on `type` (kAvg reaches MPI as kSum).
  MPI_Op op_for(DType type, ReduceOp op) const;

 private:
  std::array<MPI_Op, 4> own_ = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};  // kOwnOps
};

}  // namespace dtrain::runtime
