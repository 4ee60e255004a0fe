// mpi.h behind one include (its C API only: the deprecated C++ bindings would pull in
// libmpi_cxx), and the error check every MPI call of libdtrain goes through. Included only by
// runtime/mpi/*.cpp, so the rest of libdtrain builds without MPI's headers.
#pragma once

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

namespace dtrain::runtime {

// Throws Error (kComm) "dtrain: mpi: OP: CALL failed; expected MPI_SUCCESS, got RC (MPI's text)"
// unless rc is MPI_SUCCESS.
void check(int rc, const char* op, const char* call);

// Starts MPI (MPI_THREAD_SERIALIZED: the caller may drive libdtrain from any thread, one at a
// time) unless it runs already. Returns whether this call started it. `op` names the caller in
// the error.
bool start_mpi(const char* op);

}  // namespace dtrain::runtime
