// MPI's life in this process and the MPI bootstrap, for the code outside runtime/mpi (init(), the
// bootstrap selection), which must not see mpi.h. The MPI communicator is in
// mpi_communicator.hpp; mpi.h itself only in mpi_api.hpp.
#pragma once

#include <string>

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

// The MPI bootstrap (for MPI launchers without PMIx): initializes MPI and reads the world from it
// (the local rank and size from MPI_Comm_split_type). `initialized_here`: whether this call
// started MPI (the communicator then finalizes it).
WorldInfo mpi_world(bool* initialized_here);

// True once MPI_Init has run in this process (the application's or the MPI bootstrap's).
bool mpi_initialized();
// True once MPI_Finalize has run in this process: MPI cannot start again, so neither can a
// multi-rank Context (nor, in practice, a PMIx session: its job data are gone).
bool mpi_finalized();
// Throws the Error that says so, with `detail` (a later failure it explains) appended.
[[noreturn]] void throw_finalized(const std::string& detail);

}  // namespace dtrain::runtime
