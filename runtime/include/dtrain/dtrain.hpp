// libdtrain: what a data-parallel training code links to. init() finds this process's place in
// the job (through PMIx when a launcher provides it, else as a single process) and returns a
// Context that owns everything: the communicator that averages gradients across ranks, and what
// the Meter needs to write the rank's throughput records into the run directory.
//
//   dtrain::Context ctx = dtrain::init();
//   ctx.comm().allreduce(std::span<float>(grads), dtrain::ReduceOp::kAvg);
//   dtrain::Meter meter(ctx);
//   meter.record(step, batch_size, seconds);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace dtrain {

// Every error libdtrain throws. The message says what failed and why, e.g.
// "dtrain: bootstrap: DTRAIN_BOOTSTRAP: expected one of: pmix, single, got \"mpi\"".
class Error : public std::runtime_error {
 public:
  enum class Code { kInvalid, kComm, kSystem, kInternal };
  Error(Code code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Code code() const { return code_; }

 private:
  Code code_;
};

struct WorldInfo {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  std::string bootstrap = "single";  // how the information was found: "pmix" or "single"
};

enum class DType { kFloat32, kFloat64, kInt32, kInt64 };
enum class ReduceOp { kSum, kAvg, kMin, kMax };

std::size_t dtype_size(DType t);

template <typename T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  if constexpr (std::is_same_v<T, std::int32_t>) return DType::kInt32;
  if constexpr (std::is_same_v<T, std::int64_t>) return DType::kInt64;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>,
                "dtrain: unsupported element type");
}

// Collectives over all ranks of the job. Every rank must call the same collectives in the same
// order with the same counts, as with MPI.
class Communicator {
 public:
  virtual ~Communicator() = default;

  // `in == out` is an in-place allreduce. kAvg is defined for floating types only.
  virtual void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op) = 0;
  virtual void broadcast(void* buf, std::size_t count, DType type, int root) = 0;
  virtual void barrier() = 0;
  virtual std::string backend() const = 0;

  template <typename T>
  void allreduce(std::span<const T> in, std::span<T> out, ReduceOp op) {
    if (in.size() != out.size()) {
      throw Error(Error::Code::kInvalid, "dtrain: allreduce: input has " +
                                             std::to_string(in.size()) + " elements, output " +
                                             std::to_string(out.size()) + "; expected equal sizes");
    }
    allreduce(in.data(), out.data(), in.size(), dtype_of<T>(), op);
  }
  template <typename T>
  void allreduce(std::span<T> inout, ReduceOp op) {
    allreduce(inout.data(), inout.data(), inout.size(), dtype_of<T>(), op);
  }
  template <typename T>
  void broadcast(std::span<T> buf, int root) {
    broadcast(buf.data(), buf.size(), dtype_of<T>(), root);
  }
};

namespace detail {
struct ContextState;
}

class Context {
 public:
  explicit Context(std::unique_ptr<detail::ContextState> state);
  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;
  ~Context();

  const WorldInfo& world() const;
  Communicator& comm();
  // The run directory given by the launcher (DTRAIN_RUN_DIR), or "" outside a dtrain job.
  const std::string& run_dir() const;

 private:
  std::unique_ptr<detail::ContextState> state_;
};

// Bootstraps this process. DTRAIN_BOOTSTRAP=pmix|single forces a method; otherwise PMIx is used
// when the process was started by a PMIx launcher (mpirun, srun --mpi=pmix), else a single
// process. Throws Error naming the method and the cause when a chosen method fails.
Context init();

// Per-rank throughput records, one JSON object per line in RUN_DIR/rank-NNNNN.jsonl (schema:
// docs/metrics.md). Buffered: a record costs a formatted line in memory, the file is written when
// the buffer fills, on flush() and on destruction.
class Meter {
 public:
  // An empty run_dir means the context's (DTRAIN_RUN_DIR); without either the meter is disabled
  // and drops records, so a code runs unchanged outside dtrain.
  explicit Meter(const Context& ctx, std::string run_dir = "");
  Meter(const Meter&) = delete;
  Meter& operator=(const Meter&) = delete;
  ~Meter();

  bool enabled() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  void record(std::int64_t step, std::int64_t samples, double seconds);
  void flush();

 private:
  int rank_ = 0;
  int fd_ = -1;
  std::string path_;
  std::string buffer_;
};

}  // namespace dtrain
