# Which MPI libdtrain is built against, and the one definition of how the tests start ranks with
# that MPI's launcher. Included after find_package(MPI).
#
# The MPI is FindMPI's choice: the `mpicc` found first (on Debian the alternatives' choice, Open
# MPI when both are installed), or the one named by its compiler wrapper, e.g.
#   -DMPI_C_COMPILER=/usr/bin/mpicc.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich
# FindMPI looks for the launcher beside the wrapper under the generic names, so with a wrapper
# named mpicc.mpich in /usr/bin it finds /usr/bin/mpiexec, which is whatever the alternatives
# point at: the launcher is checked against the library below instead of trusted.
#
# Sets:
#   DTRAIN_MPI_FAMILY       openmpi, mpich (MPICH and its derivatives: Cray MPICH, Intel MPI) or
#                           other, from mpi.h's own macros
#   DTRAIN_MPIEXEC_N        the launcher and the flags every test launch needs, up to and including
#                           the rank-count flag: `${DTRAIN_MPIEXEC_N} 4 ./probe`; empty when the
#                           tests have no launcher for this MPI
#   DTRAIN_MPIEXEC_BOOTSTRAP  the bootstrap libdtrain picks under that launcher: pmix (Open MPI's
#                           mpirun runs a PMIx server) or mpi (Hydra speaks PMI-1 only)
#   DTRAIN_MPIEXEC_NAME     the word in the tests' names: mpirun (Open MPI, as the tests were
#                           always named) or mpich
include(CheckSymbolExists)

# Checked again at every configure (two small compiles): a cached answer would outlive a change of
# MPI_C_COMPILER in the same tree.
unset(DTRAIN_MPI_HAS_OMPI_VERSION CACHE)
unset(DTRAIN_MPI_HAS_MPICH_VERSION CACHE)
set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
set(CMAKE_REQUIRED_QUIET ON)
check_symbol_exists(OMPI_MAJOR_VERSION mpi.h DTRAIN_MPI_HAS_OMPI_VERSION)
check_symbol_exists(MPICH_VERSION mpi.h DTRAIN_MPI_HAS_MPICH_VERSION)
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_REQUIRED_QUIET)
if(DTRAIN_MPI_HAS_OMPI_VERSION)
  set(DTRAIN_MPI_FAMILY openmpi)
elseif(DTRAIN_MPI_HAS_MPICH_VERSION)
  set(DTRAIN_MPI_FAMILY mpich)
else()
  set(DTRAIN_MPI_FAMILY other)
endif()
message(STATUS "dtrain: MPI: ${DTRAIN_MPI_FAMILY} (${MPI_C_LIB_NAMES}, headers ${MPI_C_HEADER_DIR})")

set(DTRAIN_MPIEXEC_N)
set(DTRAIN_MPIEXEC_BOOTSTRAP)
set(DTRAIN_MPIEXEC_NAME)
if(DTRAIN_BUILD_TESTS)
  # The launcher's family, from what it says of itself: Open MPI's mpirun prints "(Open MPI)" or
  # "(OpenRTE)", Hydra "HYDRA build details".
  set(launcher_family none)
  if(MPIEXEC_EXECUTABLE)
    execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE launcher_says
                    ERROR_VARIABLE launcher_says TIMEOUT 30 RESULT_VARIABLE launcher_rc)
    if(launcher_says MATCHES "Open MPI|OpenRTE")
      set(launcher_family openmpi)
    elseif(launcher_says MATCHES "HYDRA")
      set(launcher_family mpich)
    else()
      set(launcher_family other)
    endif()
  endif()
  if(DTRAIN_MPI_FAMILY STREQUAL "other" OR launcher_family STREQUAL "other"
     OR launcher_family STREQUAL "none")
    message(WARNING "dtrain: no Open MPI or Hydra launcher for the ${DTRAIN_MPI_FAMILY} MPI "
                    "(MPIEXEC_EXECUTABLE=\"${MPIEXEC_EXECUTABLE}\"): the tests that start ranks "
                    "with an MPI launcher are not added")
  elseif(NOT launcher_family STREQUAL DTRAIN_MPI_FAMILY)
    # Ranks of an MPICH program started by Open MPI's mpirun (or the reverse) each come up as a
    # single process of size 1: every test would fail, none would say why.
    set(mpi_title_openmpi "Open MPI")
    set(mpi_title_mpich "MPICH")
    message(FATAL_ERROR "dtrain: MPIEXEC_EXECUTABLE: expected the launcher of the MPI libdtrain "
                        "builds against (${mpi_title_${DTRAIN_MPI_FAMILY}}, from MPI_C_COMPILER="
                        "${MPI_C_COMPILER}), got ${MPIEXEC_EXECUTABLE}, which is "
                        "${mpi_title_${launcher_family}}'s; pass -DMPIEXEC_EXECUTABLE=<its "
                        "launcher>, e.g. /usr/bin/mpiexec.mpich or /usr/bin/mpirun.openmpi on "
                        "Debian")
  elseif(DTRAIN_MPI_FAMILY STREQUAL "openmpi")
    # As root Open MPI wants --allow-run-as-root; 4 ranks on 2 cores need --oversubscribe.
    set(DTRAIN_MPIEXEC_N ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe -n)
    set(DTRAIN_MPIEXEC_BOOTSTRAP pmix)
    set(DTRAIN_MPIEXEC_NAME mpirun)
  else()
    # Hydra runs as root, oversubscribes a host and passes the whole environment on by default.
    set(DTRAIN_MPIEXEC_N ${MPIEXEC_EXECUTABLE} -n)
    set(DTRAIN_MPIEXEC_BOOTSTRAP mpi)
    set(DTRAIN_MPIEXEC_NAME mpich)
  endif()
endif()
