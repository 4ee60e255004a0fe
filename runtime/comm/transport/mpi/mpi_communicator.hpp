// The MPI backend (see mpi_communicator.cpp).
#pragma once

#include <memory>

#include "comm/communicator.hpp"
#include "settings.hpp"

namespace dtrain::runtime {

// MPI over host memory, for a world of more than one rank. Initializes MPI when the process has
// not (and then finalizes it on destruction); checks that MPI sees the same rank and size as the
// bootstrap. Takes settings.shm and settings.piece_bytes. Throws Error (kComm) when MPI fails.
// `owns_mpi`: MPI was initialized by the MPI bootstrap (mpi_world) and is finalized with the
// communicator.
std::unique_ptr<Communicator> make_mpi_communicator(const WorldInfo& world, bool owns_mpi,
                                                    const Settings& settings);

}  // namespace dtrain::runtime
