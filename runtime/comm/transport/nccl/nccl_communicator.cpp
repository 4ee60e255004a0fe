// NCCL over device memory, through the functions nccl_library.cpp loads at run time (libdtrain does
// not link NCCL or CUDA).
// Every call enqueues on the communicator's own stream (created non-blocking: it does not wait for
// the legacy default stream, nor for any stream of the caller's) and then polls the stream and
// NCCL's async error until done or the deadline; at the deadline the communicator is aborted
// (ncclCommAbort), which is NCCL's documented way out of a collective whose peer is gone. So a call
// returns with its results in device memory, readable from any stream, and the caller must have
// finished writing its inputs before the call (the stream contract in dtrain.hpp, device_comm()).
#include "comm/transport/nccl/nccl_communicator.hpp"

#include "comm/transport/nccl/nccl_library.hpp"
#include "dtrain/config.hpp"

#if DTRAIN_HAVE_NCCL
#include <cstring>
#include <string>
#include <thread>

namespace dtrain::runtime {
namespace {

using Clock = std::chrono::steady_clock;

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::kFloat32:
      return ncclFloat32;
    case DType::kFloat64:
      return ncclFloat64;
    case DType::kInt32:
      return ncclInt32;
    case DType::kInt64:
      return ncclInt64;
    case DType::kUInt8:
      return ncclUint8;
    case DType::kFloat16:
      return ncclFloat16;
    case DType::kBFloat16:
      return ncclBfloat16;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kAvg:
      return ncclAvg;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kProduct:
      return ncclProd;
  }
  return ncclSum;
}

void cuda_check(const NcclApi& api, cudaError_t rc, const char* call) {
  if (rc == cudaSuccess) return;
  throw Error(Error::Code::kComm, std::string("nccl: ") + call + " failed: " +
                                      api.cudaGetErrorString(rc) + " (" + std::to_string(rc) + ")");
}

void nccl_check(const NcclApi& api, ncclResult_t rc, ncclComm_t comm, const char* call) {
  if (rc == ncclSuccess || rc == ncclInProgress) return;
  const char* last = api.ncclGetLastError(comm);
  throw Error(Error::Code::kComm, std::string("nccl: ") + call +
                                      " failed: " + api.ncclGetErrorString(rc) +
                                      (last && *last ? std::string(" (") + last + ")" : ""));
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(Store& store, const WorldInfo& world, Timeout timeout)
      : Communicator(world.size),
        api_(nccl_api()),
        rank_(world.rank),
        size_(world.size),
        timeout_(timeout) {
    int devices = 0;
    const cudaError_t rc = api_.cudaGetDeviceCount(&devices);
    if (rc != cudaSuccess || devices == 0) {
      throw Error(Error::Code::kInvalid,
                  std::string("dtrain: nccl: no CUDA device: cudaGetDeviceCount ") +
                      (rc != cudaSuccess ? std::string("returned ") + api_.cudaGetErrorString(rc)
                                         : std::string("found 0 devices")) +
                      "; expected a visible GPU (CUDA_VISIBLE_DEVICES) for device collectives");
    }
    device_ = world.local_rank % devices;
    cuda_check(api_, api_.cudaSetDevice(device_), "cudaSetDevice");
    ncclUniqueId id;
    if (rank_ == 0) {
      nccl_check(api_, api_.ncclGetUniqueId(&id), nullptr, "ncclGetUniqueId");
      store.set("id", std::string(reinterpret_cast<const char*>(&id), sizeof id));
    }
    const std::string got = store.get("id", timeout.after);
    if (got.size() != sizeof id) {
      throw Error(Error::Code::kComm, "dtrain: nccl: unique id from the " +
                                          std::string(store.method()) + " store has " +
                                          std::to_string(got.size()) + " bytes; expected " +
                                          std::to_string(sizeof id));
    }
    std::memcpy(&id, got.data(), sizeof id);
    cuda_check(api_, api_.cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
               "cudaStreamCreate");
    nccl_check(api_, api_.ncclCommInitRank(&comm_, size_, id, rank_), nullptr, "ncclCommInitRank");
  }

  ~NcclCommunicator() override {
    if (comm_ != nullptr) {
      if (aborted_) {
        api_.ncclCommAbort(comm_);
      } else {
        api_.ncclCommDestroy(comm_);
      }
    }
    if (token_ != nullptr) api_.cudaFree(token_);
    if (stream_ != nullptr) api_.cudaStreamDestroy(stream_);
  }

  void broadcast(void* buf, std::size_t count, DType type, int root) override {
    enter();
    nccl_check(api_, api_.ncclBroadcast(buf, buf, count, nccl_type(type), root, comm_, stream_),
               comm_, "ncclBroadcast");
    finish("broadcast");
  }
  void allgather(const void* in, void* out, std::size_t count, DType type) override {
    enter();
    nccl_check(api_, api_.ncclAllGather(in, out, count, nccl_type(type), comm_, stream_), comm_,
               "ncclAllGather");
    finish("allgather");
  }
  void barrier() override {
    // NCCL has no barrier: a one-element allreduce is one.
    if (token_ == nullptr) cuda_check(api_, api_.cudaMalloc(&token_, sizeof(float)), "cudaMalloc");
    allreduce(token_, token_, 1, DType::kFloat32, ReduceOp::kSum);
  }
  std::string_view backend() const override { return "nccl"; }
  int device() const override { return device_; }
  bool enforces_deadline() const override { return true; }
  void abandon() noexcept override { aborted_ = true; }

 protected:
  void do_allreduce(const void* in, void* out, std::size_t count, DType type,
                    ReduceOp op) override {
    enter();
    nccl_check(api_,
               api_.ncclAllReduce(in, out, count, nccl_type(type), nccl_op(op), comm_, stream_),
               comm_, "ncclAllReduce");
    finish("allreduce");
  }
  void do_reduce_scatter(const void* in, void* out, std::size_t count, DType type,
                         ReduceOp op) override {
    enter();
    nccl_check(api_,
               api_.ncclReduceScatter(in, out, count, nccl_type(type), nccl_op(op), comm_, stream_),
               comm_, "ncclReduceScatter");
    finish("reduce_scatter");
  }
  bool averages(DType) const override { return true; }  // ncclAvg, on the device

 private:
  void enter() {
    if (aborted_) {
      throw Error(Error::Code::kComm, "nccl: communicator aborted after an earlier timeout");
    }
    cuda_check(api_, api_.cudaSetDevice(device_), "cudaSetDevice");  // the progress thread's device
  }

  // Polls until the stream is idle; at the deadline aborts the communicator.
  void finish(const char* what) {
    const auto deadline = Clock::now() + timeout_.after;
    for (;;) {
      const cudaError_t rc = api_.cudaStreamQuery(stream_);
      if (rc == cudaSuccess) return;
      if (rc != cudaErrorNotReady) cuda_check(api_, rc, "cudaStreamQuery");
      ncclResult_t async = ncclSuccess;
      api_.ncclCommGetAsyncError(comm_, &async);
      if (async != ncclSuccess && async != ncclInProgress) {
        aborted_ = true;
        nccl_check(api_, async, comm_, what);
      }
      if (Clock::now() >= deadline) {
        aborted_ = true;
        throw Error(Error::Code::kTimeout,
                    std::string("nccl: ") + what + " not complete after " + timeout_text(timeout_) +
                        "; missing ranks: unknown (NCCL does not say); the communicator was "
                        "aborted");
      }
      std::this_thread::yield();
    }
  }

  const NcclApi& api_;  // loaded on the first device communicator of the process
  int rank_;
  int size_;
  Timeout timeout_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  void* token_ = nullptr;  // the barrier's one float
  bool aborted_ = false;
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(Store& store, const WorldInfo& world,
                                                     Timeout timeout) {
  return std::make_unique<NcclCommunicator>(store, world, timeout);
}

}  // namespace dtrain::runtime

#else  // !DTRAIN_HAVE_NCCL

namespace dtrain::runtime {

std::unique_ptr<Communicator> make_nccl_communicator(Store&, const WorldInfo&, Timeout) {
  nccl_library();  // throws the one "built without NCCL" error
  throw Error(Error::Code::kInternal,
              "dtrain: nccl: nccl_library() returned in a build without NCCL");
}

}  // namespace dtrain::runtime

#endif
