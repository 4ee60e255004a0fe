// libdtrain: what a data-parallel training code links to. init() finds this process's place in
// the job (through PMIx when a launcher provides it, else as a single process) and returns a
// Context that owns everything libdtrain holds for the process: the bootstrap session and the
// communicator that sums or averages gradients across ranks. A Meter writes the rank's
// throughput records into the run directory.
//
//   dtrain::Context ctx = dtrain::init();
//   ctx.comm().allreduce(std::span<float>(grads), dtrain::ReduceOp::kAvg);
//   dtrain::Meter meter(ctx);
//   meter.record(step, batch_size, seconds);
//
// Nothing here is thread-safe: call a Context and a Meter from one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

// libdtrain.so exports only what is marked so; everything else stays internal to the library.
#ifndef DTRAIN_API
#define DTRAIN_API __attribute__((visibility("default")))
#endif

namespace dtrain {

namespace runtime {
class Communicator;
struct ContextState;
}  // namespace runtime

// Every error libdtrain throws. The message says what failed, what was expected and what was
// found, e.g. `dtrain: bootstrap: DTRAIN_BOOTSTRAP: unknown method; expected pmix or single, got
// "mpi"`. The code is what the C ABI returns (dtrain_status_t).
class DTRAIN_API Error : public std::runtime_error {
 public:
  enum class Code {
    kInvalid,   // a bad argument or setting: fix the caller or the environment
    kComm,      // the launcher, PMIx or MPI failed
    kSystem,    // the operating system refused (a file, a directory)
    kInternal,  // a bug in libdtrain
  };
  Error(Code code, const std::string& message);
  ~Error() override;  // out of line: one vtable and typeinfo, exported from libdtrain.so
  Code code() const noexcept { return code_; }

 private:
  Code code_;
};

// Where this process sits in the job, as the bootstrap found it.
struct WorldInfo {
  int rank = 0;        // global rank, 0 .. size-1
  int size = 1;        // number of ranks in the job
  int local_rank = 0;  // rank among the ranks on this node, 0 .. local_size-1
  int local_size = 1;  // number of ranks on this node
  int node_id = 0;     // the launcher's index of this node; -1 when the launcher does not say
  std::string hostname;
  std::string bootstrap = "single";  // how it was found: "pmix" or "single"
};

enum class DType { kFloat32, kFloat64, kInt32, kInt64 };
enum class ReduceOp { kSum, kAvg, kMin, kMax };

// Bytes per element.
DTRAIN_API std::size_t dtype_size(DType type);
// "float32", "kAvg", ...: for messages.
DTRAIN_API std::string_view to_string(DType type);
DTRAIN_API std::string_view to_string(ReduceOp op);

template <typename T>
constexpr DType dtype_of() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>,
                "dtrain: element type; expected float, double, std::int32_t or std::int64_t");
  if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  if constexpr (std::is_same_v<T, std::int32_t>) return DType::kInt32;
  return DType::kInt64;
}

// Collectives over all ranks of the job, on host memory. Every rank must call the same
// collectives in the same order with the same counts and types, as with MPI. This is a handle
// owned by the Context: the backend (MPI, or a copy for a single process) stays behind it, so
// adding one changes no user code and no ABI.
class DTRAIN_API Comm {
 public:
  Comm(runtime::Communicator& impl, int world_size) : impl_(&impl), world_size_(world_size) {}

  // `in == out` is an in-place allreduce; otherwise the buffers must not overlap. kAvg is the
  // sum divided by the number of ranks, for float32 and float64 only.
  void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op);
  void broadcast(void* buf, std::size_t count, DType type, int root);
  void barrier();
  // "mpi" or "single".
  std::string_view backend() const;

  // `in` converts from anything a span of T can be made of (a vector, an array); only `out`
  // decides T.
  template <typename T>
  void allreduce(std::span<const std::type_identity_t<T>> in, std::span<T> out, ReduceOp op) {
    if (in.size() != out.size()) throw_size_mismatch(in.size(), out.size());
    allreduce(in.data(), out.data(), out.size(), dtype_of<T>(), op);
  }
  template <typename T>
  void allreduce(std::span<T> inout, ReduceOp op) {
    allreduce(inout.data(), inout.data(), inout.size(), dtype_of<T>(), op);
  }
  template <typename T>
  void broadcast(std::span<T> buf, int root) {
    broadcast(buf.data(), buf.size(), dtype_of<T>(), root);
  }

 private:
  [[noreturn]] static void throw_size_mismatch(std::size_t in, std::size_t out);

  runtime::Communicator* impl_;
  int world_size_;
};

// Everything libdtrain holds for this process. Movable, not copyable; a moved-from Context may
// only be destroyed or assigned to. Destroying it finalizes MPI (only if libdtrain initialized
// it) and then the PMIx session. MPI cannot start twice in a process, so a program that uses
// more than one rank creates one Context and keeps it until it is done communicating.
class DTRAIN_API Context {
 public:
  explicit Context(std::unique_ptr<runtime::ContextState> state);
  Context(Context&& other) noexcept;
  Context& operator=(Context&& other) noexcept;
  ~Context();

  const WorldInfo& world() const;
  Comm& comm();

 private:
  std::unique_ptr<runtime::ContextState> state_;
};

// Bootstraps this process. DTRAIN_BOOTSTRAP=pmix|single forces a method; otherwise PMIx is used
// when a PMIx launcher started the process (PMIX_NAMESPACE or PMIX_RANK set: Open MPI's mpirun,
// srun --mpi=pmix), else it is a single process. With more than one rank the communicator is MPI.
// Throws Error naming the method and the cause when the chosen method fails.
DTRAIN_API Context init();

// Per-rank throughput records, one JSON object per line appended to RUN_DIR/rank-NNNNN.jsonl
// (NNNNN: the global rank; schema in docs/metrics.md). A record costs a formatted line in memory;
// the file is written when the buffer passes 64 KiB, on flush() and on destruction.
class DTRAIN_API Meter {
 public:
  // An empty run_dir means DTRAIN_RUN_DIR from the environment; without either the meter is
  // disabled and drops records, so a code runs unchanged outside dtrain. Throws Error (kSystem)
  // naming the file when it cannot be opened; the directory must exist.
  explicit Meter(const Context& ctx, std::string run_dir = "");
  Meter(Meter&& other) noexcept;
  Meter& operator=(Meter&& other) noexcept;
  Meter(const Meter&) = delete;
  Meter& operator=(const Meter&) = delete;
  ~Meter();  // flushes; a failure to write here is dropped, since a destructor cannot throw

  bool enabled() const { return fd_ >= 0; }
  // The file written, "" when disabled.
  const std::string& path() const { return path_; }

  // One training step: `samples` processed in `seconds` (finite, >= 0). Throws Error (kInvalid)
  // for negative or non-finite values, and (kSystem) when a flush fails.
  void record(std::int64_t step, std::int64_t samples, double seconds);
  void flush();

 private:
  void close_file() noexcept;

  int rank_ = 0;
  int fd_ = -1;
  std::string path_;
  std::string buffer_;
};

}  // namespace dtrain
