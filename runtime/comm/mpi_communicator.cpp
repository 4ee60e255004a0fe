// The only file that includes mpi.h. Only the C API: the deprecated C++ bindings would pull in
// libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>

#include <string>

#include "comm/backends.hpp"

namespace dtrain::detail {
namespace {

MPI_Datatype mpi_type(DType t) {
  switch (t) {
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
    case ReduceOp::kAvg:  // summed, then divided by the world size
      return MPI_SUM;
    case ReduceOp::kMin:
      return MPI_MIN;
    case ReduceOp::kMax:
      return MPI_MAX;
  }
  return MPI_OP_NULL;
}

void check(int rc, const char* call, const char* op) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(Error::Code::kComm,
              std::string("dtrain: ") + op + ": " + call + " failed: " + std::string(text, len));
}

class MpiCommunicator : public Communicator {
 public:
  explicit MpiCommunicator(const WorldInfo& world) : size_(world.size) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread",
            "init");
      owns_mpi_ = true;
    }
    // Errors come back as codes, so they become dtrain::Error instead of aborting the job.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup", "init");
    int mpi_size = 0;
    MPI_Comm_size(comm_, &mpi_size);
    if (mpi_size != world.size) {
      throw Error(Error::Code::kComm, "dtrain: init: MPI reports " + std::to_string(mpi_size) +
                                          " ranks but the bootstrap found " +
                                          std::to_string(world.size) +
                                          "; expected the same job (a launcher mismatch?)");
    }
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    MPI_Comm_free(&comm_);
    if (owns_mpi_) MPI_Finalize();
  }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op) override {
    check_reduce(type, op);
    // MPI counts are int; split larger buffers so any size works.
    constexpr std::size_t kChunk = 1u << 30;
    const std::size_t elem = dtype_size(type);
    for (std::size_t done = 0; done < count; done += kChunk) {
      const int n = static_cast<int>(std::min(kChunk, count - done));
      const char* src = static_cast<const char*>(in) + done * elem;
      char* dst = static_cast<char*>(out) + done * elem;
      check(
          MPI_Allreduce(in == out ? MPI_IN_PLACE : src, dst, n, mpi_type(type), mpi_op(op), comm_),
          "MPI_Allreduce", "allreduce");
    }
    if (op == ReduceOp::kAvg) {
      if (type == DType::kFloat32) {
        auto* p = static_cast<float*>(out);
        const float inv = 1.0f / static_cast<float>(size_);
        for (std::size_t i = 0; i < count; ++i) p[i] *= inv;
      } else {
        auto* p = static_cast<double*>(out);
        const double n = static_cast<double>(size_);
        for (std::size_t i = 0; i < count; ++i) p[i] /= n;
      }
    }
  }

  void broadcast(void* buf, std::size_t count, DType type, int root) override {
    if (root < 0 || root >= size_) {
      throw Error(Error::Code::kInvalid, "dtrain: broadcast: root " + std::to_string(root) +
                                             " does not exist; expected 0 to " +
                                             std::to_string(size_ - 1));
    }
    constexpr std::size_t kChunk = 1u << 30;
    const std::size_t elem = dtype_size(type);
    for (std::size_t done = 0; done < count; done += kChunk) {
      const int n = static_cast<int>(std::min(kChunk, count - done));
      check(MPI_Bcast(static_cast<char*>(buf) + done * elem, n, mpi_type(type), root, comm_),
            "MPI_Bcast", "broadcast");
    }
  }

  void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier", "barrier"); }
  std::string backend() const override { return "mpi"; }

 private:
  int size_;
  bool owns_mpi_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(const WorldInfo& world) {
  return std::make_unique<MpiCommunicator>(world);
}

}  // namespace dtrain::detail
