// MPI's start, its end, and the MPI bootstrap.
#include "mpi/mpi.hpp"

#include <string>

#include "mpi/mpi_api.hpp"

namespace dtrain::runtime {

void check(int rc, const char* op, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  throw Error(Error::Code::kComm, std::string("dtrain: mpi: ") + op + ": " + call +
                                      " failed; expected MPI_SUCCESS, got " + std::to_string(rc) +
                                      (len > 0 ? " (" + std::string(text, len) + ")" : ""));
}

bool start_mpi(const char* op) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return false;
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), op, "MPI_Init_thread");
  return true;
}

bool mpi_initialized() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  return initialized != 0;
}

bool mpi_finalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

void throw_finalized(const std::string& detail) {
  throw Error(Error::Code::kComm,
              "dtrain: init: MPI was already finalized in this process and cannot start again; "
              "expected one dtrain::Context kept for the whole run" +
                  (detail.empty() ? std::string() : " (" + detail + ")"));
}

WorldInfo mpi_world(bool* initialized_here) {
  if (mpi_finalized()) throw_finalized("");
  *initialized_here = start_mpi("bootstrap");
  WorldInfo w;
  w.bootstrap = "mpi";
  check(MPI_Comm_rank(MPI_COMM_WORLD, &w.rank), "bootstrap", "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &w.size), "bootstrap", "MPI_Comm_size");
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &node),
        "bootstrap", "MPI_Comm_split_type");
  MPI_Comm_rank(node, &w.local_rank);
  MPI_Comm_size(node, &w.local_size);
  MPI_Comm_free(&node);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  if (MPI_Get_processor_name(name, &len) == MPI_SUCCESS) w.hostname.assign(name, len);
  w.node_id = -1;
  return w;
}

}  // namespace dtrain::runtime
