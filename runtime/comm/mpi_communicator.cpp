// MPI over host memory. The only file that includes mpi.h, and only its C API: the deprecated
// C++ bindings would pull in libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <string>

#include "comm/communicator.hpp"

namespace dtrain::runtime {
namespace {

MPI_Datatype mpi_type(DType type) {
  switch (type) {
    case DType::kFloat32:
      return MPI_FLOAT;
    case DType::kFloat64:
      return MPI_DOUBLE;
    case DType::kInt32:
      return MPI_INT32_T;
    case DType::kInt64:
      return MPI_INT64_T;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:  // MPI has no average: summed here, divided afterwards
      return MPI_SUM;
    case ReduceOp::kMin:
      return MPI_MIN;
    case ReduceOp::kMax:
      return MPI_MAX;
  }
  return MPI_OP_NULL;
}

void check(int rc, const char* op, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  throw Error(Error::Code::kComm, std::string("dtrain: mpi: ") + op + ": " + call +
                                      " failed; expected MPI_SUCCESS, got " + std::to_string(rc) +
                                      (len > 0 ? " (" + std::string(text, len) + ")" : ""));
}

// MPI counts are int: larger buffers go in pieces of this many elements.
constexpr std::size_t kMaxChunk = INT_MAX;

template <typename T>
void divide(void* out, std::size_t count, int size) {
  // Divides (rather than multiplying by 1/size) so an average of integer-valued data is exact
  // whenever the quotient is representable.
  auto* p = static_cast<T*>(out);
  const T n = static_cast<T>(size);
  for (std::size_t i = 0; i < count; ++i) p[i] /= n;
}

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(const WorldInfo& world) : size_(world.size) {
    if (mpi_finalized()) throw_finalized("");
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      // SERIALIZED: the caller may drive libdtrain from any thread, one at a time.
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "init",
            "MPI_Init_thread");
      owns_mpi_ = true;
    }
    // A private communicator keeps our traffic apart from the application's own MPI calls, and
    // returning error codes on it (not on MPI_COMM_WORLD, which belongs to the application) turns
    // failures into dtrain::Error instead of aborting the job.
    try {
      check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "init", "MPI_Comm_dup");
      check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "init", "MPI_Comm_set_errhandler");
      int mpi_rank = -1;
      int mpi_size = -1;
      check(MPI_Comm_rank(comm_, &mpi_rank), "init", "MPI_Comm_rank");
      check(MPI_Comm_size(comm_, &mpi_size), "init", "MPI_Comm_size");
      if (mpi_rank != world.rank || mpi_size != world.size) {
        throw Error(Error::Code::kComm,
                    "dtrain: mpi: init: MPI and the " + world.bootstrap +
                        " bootstrap disagree about this process; expected rank " +
                        std::to_string(world.rank) + " of " + std::to_string(world.size) +
                        ", got rank " + std::to_string(mpi_rank) + " of " +
                        std::to_string(mpi_size) + " (two launchers?)");
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~MpiCommunicator() override { release(); }

  void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op) override {
    const std::size_t elem = dtype_size(type);
    for (std::size_t done = 0; done < count;) {
      const std::size_t n = std::min(kMaxChunk, count - done);
      const void* src = in == out ? MPI_IN_PLACE : static_cast<const char*>(in) + done * elem;
      void* dst = static_cast<char*>(out) + done * elem;
      check(MPI_Allreduce(src, dst, static_cast<int>(n), mpi_type(type), mpi_op(op), comm_),
            "allreduce", "MPI_Allreduce");
      done += n;
    }
    if (op == ReduceOp::kAvg) {
      if (type == DType::kFloat32) divide<float>(out, count, size_);
      if (type == DType::kFloat64) divide<double>(out, count, size_);
    }
  }

  void broadcast(void* buf, std::size_t count, DType type, int root) override {
    const std::size_t elem = dtype_size(type);
    for (std::size_t done = 0; done < count;) {
      const std::size_t n = std::min(kMaxChunk, count - done);
      check(MPI_Bcast(static_cast<char*>(buf) + done * elem, static_cast<int>(n), mpi_type(type),
                      root, comm_),
            "broadcast", "MPI_Bcast");
      done += n;
    }
  }

  void barrier() override { check(MPI_Barrier(comm_), "barrier", "MPI_Barrier"); }
  std::string_view backend() const override { return "mpi"; }

 private:
  // Frees our communicator and finalizes MPI if we started it. Nothing to do once the
  // application has finalized MPI itself (it started MPI, so it may).
  void release() noexcept {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    if (owns_mpi_) MPI_Finalize();
    owns_mpi_ = false;
  }

  int size_;
  bool owns_mpi_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace

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

std::unique_ptr<Communicator> make_mpi_communicator(const WorldInfo& world) {
  return std::make_unique<MpiCommunicator>(world);
}

}  // namespace dtrain::runtime
