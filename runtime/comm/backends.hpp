// The communicator backends libdtrain can create; init() picks one.
#pragma once

#include <memory>

#include "dtrain/dtrain.hpp"

namespace dtrain::detail {

// MPI over host memory. Initializes MPI when the process has not; finalizes only what it began.
std::unique_ptr<Communicator> make_mpi_communicator(const WorldInfo& world);

// One rank: every collective is a copy.
std::unique_ptr<Communicator> make_single_communicator();

// Throws Error (kInvalid) for an op the type does not support (kAvg on integers).
void check_reduce(DType type, ReduceOp op);

}  // namespace dtrain::detail
