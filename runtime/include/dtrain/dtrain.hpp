// libdtrain: what a data-parallel training code links to. init() finds this process's place in
// the job (through PMIx, an MPI launcher or torchrun's variables, else as a single process) and
// returns a Context that owns everything libdtrain holds for the process: the bootstrap session
// and the communicator that sums or averages gradients across ranks. A Meter writes the rank's
// throughput records into the run directory.
//
//   dtrain::Context ctx = dtrain::init();
//   ctx.comm().allreduce(std::span<float>(grads), dtrain::ReduceOp::kAvg);
//   dtrain::Meter meter(ctx);
//   meter.start_step(); ... meter.end_step(batch_size);  // or meter.record(step, batch_size, s)
//
// Nothing here is thread-safe: call a Context and a Meter from one thread at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

// libdtrain.so exports only what is marked so; everything else stays internal to the library.
#ifndef DTRAIN_API
#define DTRAIN_API __attribute__((visibility("default")))
#endif

namespace dtrain {

namespace runtime {
class Engine;
struct Pending;
struct ContextState;
struct FusionPlan;
class MeterFile;
struct ResumedStep;
}  // namespace runtime

// Every error libdtrain throws. The message says what failed, what was expected and what was
// found, e.g. `dtrain: bootstrap: DTRAIN_BOOTSTRAP: unknown method; expected pmix, mpi, tcp, env
// or single, got "pmi"`. The code is what the C ABI returns (dtrain_status_t).
class DTRAIN_API Error : public std::runtime_error {
 public:
  enum class Code {
    kInvalid,   // a bad argument or setting: fix the caller or the environment
    kComm,      // the launcher, PMIx, MPI, NCCL or a peer's connection failed
    kSystem,    // the operating system refused (a file, a directory)
    kInternal,  // a bug in libdtrain
    kTimeout,   // a peer or the store did not answer before the deadline (DTRAIN_TIMEOUT)
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
  std::string bootstrap = "single";  // how it was found: "pmix", "mpi", "tcp" or "single"
  // Who applied the rank's GPUs, CPUs and NICs (docs/runtime-api.md): "launcher" (dtrain bind or
  // the SPANK plugin), "init: gpus 3 cpus 0-7,32-39 bound" (init() did), "off" (DTRAIN_AFFINITY),
  // "off: single process without a launcher", or "skipped: CAUSE".
  std::string affinity;
  // Which attempt of a job that restarts after failures this is, from 0 (DTRAIN_ATTEMPT, set by
  // `dtrain supervise`; docs/fault-tolerance.md): 0 for a job that never restarted.
  int attempt = 0;
};

// kFloat16 (IEEE binary16) and kBFloat16 are passed as raw 16-bit patterns (std::uint16_t
// storage); their reductions are computed in float and rounded to nearest even.
enum class DType { kFloat32, kFloat64, kInt32, kInt64, kUInt8, kFloat16, kBFloat16 };
// kProduct multiplies; kAvg is the sum divided by the number of ranks (floating types only).
enum class ReduceOp { kSum, kAvg, kMin, kMax, kProduct };

// Bytes per element.
DTRAIN_API std::size_t dtype_size(DType type);
// "float32", "avg", ...: for messages, in the words users write (Python's ReduceOp.AVG, the C
// ABI's DTRAIN_OP_AVG), not the enumerator's spelling.
DTRAIN_API std::string_view to_string(DType type);
DTRAIN_API std::string_view to_string(ReduceOp op);

template <typename T>
constexpr DType dtype_of() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> ||
                    std::is_same_v<T, std::uint8_t>,
                "dtrain: element type; expected float, double, std::int32_t, std::int64_t or "
                "std::uint8_t (float16/bfloat16: pass DType explicitly)");
  if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  if constexpr (std::is_same_v<T, std::int32_t>) return DType::kInt32;
  if constexpr (std::is_same_v<T, std::uint8_t>) return DType::kUInt8;
  return DType::kInt64;
}

// A collective started asynchronously. wait() blocks until it is done (or throws its error, or
// Error kTimeout after DTRAIN_TIMEOUT); test() says whether it is done without blocking. Buffers
// must stay valid and untouched until it is done. Dropping a Work without waiting is allowed: the
// collective still completes in order.
class DTRAIN_API Work {
 public:
  Work() = default;
  Work(runtime::Engine* engine, std::shared_ptr<runtime::Pending> pending)
      : engine_(engine), pending_(std::move(pending)) {}
  void wait();
  bool test();
  // The collective's sequence number on its communicator (0, 1, ...); 0 for a message.
  std::uint64_t sequence() const;
  // The sender of a completed receive (Comm::irecv, kAnySource included); -1 otherwise.
  int source() const;

 private:
  runtime::Engine* engine_ = nullptr;
  std::shared_ptr<runtime::Pending> pending_;
};

// Collectives over all ranks of the job, on host memory. Every rank must call the same
// collectives in the same order with the same counts and types, as with MPI. This is a handle
// owned by the Context: the backend (MPI, TCP, NCCL, or a copy for a single process) stays behind
// it, so adding one changes no user code and no ABI. Each collective has a sequence number (counted
// from 0) and a deadline (DTRAIN_TIMEOUT seconds, default 300): a rank that never arrives makes
// the others throw Error (kTimeout or kComm) naming the operation, its number and, when the
// backend can tell, the missing ranks; the communicator is unusable afterwards.
class DTRAIN_API Comm {
 public:
  explicit Comm(runtime::Engine& engine) : engine_(&engine) {}

  // `in == out` is in place; otherwise the buffers must not overlap. kAvg is the sum divided by
  // the number of ranks, for floating types only.
  void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op);
  void broadcast(void* buf, std::size_t count, DType type, int root);
  // `out` holds size() * count elements: rank r's `count` elements land at r * count. `in` may be
  // out + rank() * count (in place).
  void allgather(const void* in, void* out, std::size_t count, DType type);
  // `in` holds size() * count elements; `out` receives this rank's `count` elements of their
  // reduction (block rank()). `in == out` is in place: the result lands at the start.
  void reduce_scatter(const void* in, void* out, std::size_t count, DType type, ReduceOp op);
  void barrier();

  // Rooted collectives, moving only what each rank needs (the root receives or sends one block
  // per rank, the others one): gather's `out` (the root's; others may pass null) holds size() *
  // count elements, rank r's at r * count, and `in` may be the root's block of it (in place);
  // scatter sends block r of the root's `in` (size() * count) to rank r's `out`, which may be
  // the root's own block of `in`; reduce combines every rank's `in` into the root's `out`
  // (`in == out` in place; the others' `out` is not written and may be null).
  void gather(const void* in, void* out, std::size_t count, DType type, int root);
  void scatter(const void* in, void* out, std::size_t count, DType type, int root);
  void reduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op, int root);
  // All-to-all: block r of `in` goes to rank r; block s of `out` comes from rank s. alltoall's
  // blocks are `count` elements each (`in` and `out` hold size() * count); alltoallv's are given
  // per rank (counts and offsets in elements, size() of each; zeros allowed, and different on
  // every call): send_counts[r] elements at send_offsets[r] go to rank r, which expects exactly
  // as many in its recv_counts. `in` and `out` must not overlap. The point-to-point messages of
  // the backend carry these (host memory: not yet the NCCL communicator).
  void alltoall(const void* in, void* out, std::size_t count, DType type);
  void alltoallv(const void* in, std::span<const std::size_t> send_counts,
                 std::span<const std::size_t> send_offsets, void* out,
                 std::span<const std::size_t> recv_counts,
                 std::span<const std::size_t> recv_offsets, DType type);

  Work allreduce_async(const void* in, void* out, std::size_t count, DType type, ReduceOp op);
  Work broadcast_async(void* buf, std::size_t count, DType type, int root);
  Work allgather_async(const void* in, void* out, std::size_t count, DType type);
  Work reduce_scatter_async(const void* in, void* out, std::size_t count, DType type, ReduceOp op);
  Work gather_async(const void* in, void* out, std::size_t count, DType type, int root);
  Work scatter_async(const void* in, void* out, std::size_t count, DType type, int root);
  Work reduce_async(const void* in, void* out, std::size_t count, DType type, ReduceOp op,
                    int root);
  Work alltoall_async(const void* in, void* out, std::size_t count, DType type);
  Work alltoallv_async(const void* in, std::span<const std::size_t> send_counts,
                       std::span<const std::size_t> send_offsets, void* out,
                       std::span<const std::size_t> recv_counts,
                       std::span<const std::size_t> recv_offsets, DType type);

  // Point-to-point messages of host buffers: `count` elements of `type` to rank `dst`, or from
  // rank `src` (kAnySource: whichever rank sends first), with a `tag` (>= 0) that the receive
  // names too. Messages from one rank with one tag are received in the order sent. A send
  // completes once its bytes are on their way (its buffer may be reused), a receive once they are
  // in `buf`; recv() returns the sender. Independent of the collectives: neither waits for the
  // other, and both may be in flight at once (a pipeline's stages send while they reduce).
  // Errors: kInvalid for a bad rank or tag and for a message whose size differs from its
  // receive's (naming both sizes and both ranks); kComm naming a peer whose connection closed
  // before the message; kTimeout after DTRAIN_TIMEOUT. The TCP and MPI backends and a single
  // process carry them (not yet the NCCL one: kInvalid says so).
  static constexpr int kAnySource = -1;
  void send(const void* buf, std::size_t count, DType type, int dst, int tag = 0);
  int recv(void* buf, std::size_t count, DType type, int src, int tag = 0);
  Work isend(const void* buf, std::size_t count, DType type, int dst, int tag = 0);
  Work irecv(void* buf, std::size_t count, DType type, int src, int tag = 0);
  template <typename T>
  void send(std::span<const std::type_identity_t<T>> buf, int dst, int tag = 0) {
    send(buf.data(), buf.size(), dtype_of<T>(), dst, tag);
  }
  template <typename T>
  int recv(std::span<T> buf, int src, int tag = 0) {
    return recv(buf.data(), buf.size(), dtype_of<T>(), src, tag);
  }

  // Sub-communicators, sharing this one's connections and bootstrap (no rendezvous; a
  // connection only where a pair of the group's ranks had none): every collective and message
  // works on them, in the group's numbering. split() is MPI_Comm_split: collective over this
  // communicator; the ranks passing one `color` (>= 0) form a group, ordered by `key` then by
  // their rank here; kNoGroup: this rank joins none (nullopt). subgroup() is collective over the
  // members only: `ranks` (in this communicator's numbering, no repeats) become group ranks 0,
  // 1, ... in that order; nullopt for a rank not in it. `timeout` (positive): the deadline of the
  // group's collectives and messages, which its errors name as the group's; nullopt: this
  // communicator's (DTRAIN_TIMEOUT unless the Context was given one). Without `number` the
  // members agree on the group's id in log2(size) messages (opening the connections between
  // them); `number` (0 to 2^30 - 2): the caller's name for the group, the same on every member and
  // given to no other group of the Context (torch's new_group count, which every rank keeps):
  // then the call sends no message and waits for no rank, and a number given twice in one
  // process is refused. The returned Comm owns its group (its engine and thread), which lives as
  // long as a copy of it does; the Context must outlive it.
  static constexpr int kNoGroup = -1;
  std::optional<Comm> split(int color, int key);
  std::optional<Comm> subgroup(std::span<const int> ranks,
                               std::optional<std::chrono::milliseconds> timeout = std::nullopt,
                               std::optional<std::int64_t> number = std::nullopt);

  // "mpi", "tcp", "single" (ctx.comm()) or "nccl" (ctx.device_comm()).
  std::string_view backend() const;
  // How allreduces move data: "shared memory" when every rank of the job is on this node (and
  // DTRAIN_SHM allows), else the backend's own messages ("mpi", "tcp", "single", "nccl").
  std::string_view allreduce_transport() const;
  int rank() const;
  int size() const;
  // The CUDA device whose memory the collectives take (device_comm(): local_rank % device count),
  // or -1 for host memory (comm()).
  int device() const;
  // The sequence number the next collective gets.
  std::uint64_t next_sequence() const;

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
  // `out` holds size() * in.size() elements (throws Error kInvalid otherwise); `in` may be this
  // rank's block of `out` (in place).
  template <typename T>
  void allgather(std::span<const std::type_identity_t<T>> in, std::span<T> out) {
    const std::size_t n = in.size() * static_cast<std::size_t>(size());
    if (out.size() != n) throw_span_mismatch("allgather", "output", n, out.size());
    allgather(in.data(), out.data(), in.size(), dtype_of<T>());
  }
  // `in` holds size() * out.size() elements (throws Error kInvalid otherwise); `out` may be the
  // start of `in` (in place).
  template <typename T>
  void reduce_scatter(std::span<const std::type_identity_t<T>> in, std::span<T> out, ReduceOp op) {
    const std::size_t n = out.size() * static_cast<std::size_t>(size());
    if (in.size() != n) throw_span_mismatch("reduce_scatter", "input", n, in.size());
    reduce_scatter(in.data(), out.data(), out.size(), dtype_of<T>(), op);
  }

  runtime::Engine& engine() { return *engine_; }

 private:
  // A group's handle, owning its engine.
  explicit Comm(std::shared_ptr<runtime::Engine> owned) : engine_(owned.get()), owned_(owned) {}
  // The group of `members` (ranks here, in group order) with message-space id `id`; `timeout`:
  // its own deadline, else this communicator's.
  Comm make_group(const std::vector<int>& members, std::int64_t id,
                  std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  [[noreturn]] static void throw_size_mismatch(std::size_t in, std::size_t out);
  // "dtrain: OP: WHICH size differs from size() times the other size; expected WANT elements, ..."
  [[noreturn]] static void throw_span_mismatch(const char* op, const char* which, std::size_t want,
                                               std::size_t got);

  runtime::Engine* engine_;
  std::shared_ptr<runtime::Engine> owned_;  // a group's (split, subgroup); null for the Context's
};

// A registered list of tensors (a model's gradients) reduced together in place. Tensors under
// 1 MiB are grouped into buckets of at most DTRAIN_FUSION_BYTES (default 64 MiB), each streamed
// through a small staging buffer in cache-sized pieces; larger ones are reduced where they lie.
// When every rank is on one node, the shared-memory allreduce takes all tensors at once instead.
// Every rank registers the same list (same counts, same order). One run() is one collective
// ("allreduce_fused") on the communicator; host memory only (not device_comm()).
class DTRAIN_API FusedAllreduce {
 public:
  struct Tensor {
    void* data;
    std::size_t count;  // elements
  };
  // bucket_bytes 0: DTRAIN_FUSION_BYTES as init() read it, else 64 MiB. Throws Error (kInvalid)
  // for a null tensor, kAvg on an integer type and the NCCL communicator.
  FusedAllreduce(Comm& comm, std::vector<Tensor> tensors, DType type, ReduceOp op,
                 std::size_t bucket_bytes = 0);
  FusedAllreduce(FusedAllreduce&&) noexcept;
  FusedAllreduce& operator=(FusedAllreduce&&) noexcept;
  ~FusedAllreduce();
  void run();
  std::size_t bucket_count() const;
  std::size_t bucket_bytes() const;

 private:
  Comm* comm_;
  std::unique_ptr<runtime::FusionPlan> plan_;
};

// Everything libdtrain holds for this process. Movable, not copyable; a moved-from Context may
// only be destroyed or assigned to. Destroying it finalizes MPI (only if libdtrain initialized
// it) and then the PMIx session. MPI cannot start twice in a process, so a program that uses
// more than one rank creates one Context and keeps it until it is done communicating.
//
// Finalizing is collective: every rank's destructor waits for the others'. So a Context destroyed
// by an exception propagating through it (std::uncaught_exceptions() above its count at init())
// does not finalize: it abort()s, and the other ranks end within seconds, naming this one, instead
// of waiting for it until DTRAIN_TIMEOUT (docs/fault-tolerance.md).
class DTRAIN_API Context {
 public:
  explicit Context(std::unique_ptr<runtime::ContextState> state);
  Context(Context&& other) noexcept;
  Context& operator=(Context&& other) noexcept;
  ~Context();

  const WorldInfo& world() const;
  // Host-memory collectives (MPI, TCP or single).
  Comm& comm();
  // Device-memory collectives over NCCL on GPU local_rank % device count, its unique id exchanged
  // through the bootstrap store. Created on first call, which is collective: every rank calls it
  // at the same point. NCCL and the CUDA runtime are loaded then (dlopen; see nccl_library()).
  // Throws Error (kInvalid) when libdtrain was built without NCCL, libnccl.so.2 or
  // libcudart.so.<CUDA major> cannot be loaded (the message names the library, the loader's
  // reason and what to do) or no CUDA device is visible, naming the cause.
  //
  // Streams: NCCL runs on the communicator's own stream, created with cudaStreamNonBlocking, and
  // each call (and each Work's wait) returns once that stream is idle, so the results are in device
  // memory and any stream or the host may read them at once. The call does not wait for the
  // caller's streams, nor for the legacy default stream: whatever writes the inputs (a kernel, a
  // cudaMemcpyAsync) must be complete before the call, e.g. cudaStreamSynchronize(stream) on the
  // stream that wrote them (or cudaDeviceSynchronize()). The first call makes device() the calling
  // thread's current CUDA device. Buffers must be device (or managed) memory of that device; they
  // are not checked here (cuda_pointer_device() can; the Python module does), and a host pointer
  // fails inside NCCL.
  Comm& device_comm();

  // The bootstrap's key/value store (PMIx, MPI, TCP or in memory), for small blobs every rank
  // needs: a run id, a port. Keys live apart from libdtrain's own. Over PMIx and MPI, store_get is
  // collective (a fence): every rank calls it, in the same order; set before the get that needs
  // it. Throws Error (kTimeout) naming the key when it is not set within DTRAIN_TIMEOUT.
  void store_set(const std::string& key, const std::string& value);
  std::string store_get(const std::string& key);

  // This rank is leaving the job because of an error (as ncclCommAbort leaves a communicator):
  // writes `dtrain: rank R of N (on HOST): leaving the job: <reason>; ...` to stderr, tells the
  // other ranks (their collectives fail at once with `peer process lost: rank R (on HOST) left the
  // job after an error`, or, over TCP, when its sockets close), fails this rank's later
  // collectives (with several ranks), and makes the destructor free nothing collectively and not
  // finalize MPI. The process goes on; it is expected to exit,
  // non-zero. The first call only; nothing on a moved-from Context.
  void abort(const std::string& reason) noexcept;

 private:
  // abort(), the others told now or (`at_exit`) when the process exits.
  void leave(const std::string& reason, bool at_exit) noexcept;

  std::unique_ptr<runtime::ContextState> state_;
};

// Bootstraps this process. DTRAIN_BOOTSTRAP=pmix|mpi|tcp|env|single forces a method (env is tcp);
// otherwise the first that applies: PMIx when a PMIx launcher started the process (PMIX_NAMESPACE
// or PMIX_RANK set: Open MPI's mpirun, srun --mpi=pmix), MPI when another MPI launcher did (its
// PMI_*, OMPI_COMM_WORLD_* or MV2_* variables), TCP when torchrun's MASTER_ADDR, MASTER_PORT, RANK
// and WORLD_SIZE are set, else a single process. With more than one rank the communicator is MPI
// after the PMIx and MPI bootstraps, TCP sockets after the TCP one. Every DTRAIN_* setting
// (DTRAIN_TIMEOUT, DTRAIN_SHM, DTRAIN_AFFINITY, ...) is read here, once; a bad value is an Error
// (kInvalid) naming the variable, e.g. `dtrain: DTRAIN_SHM: expected 0 (...) or 1 (...), got
// "yes"`. Throws Error naming the method and the cause when the chosen method fails.
DTRAIN_API Context init();

// A key/value store the caller already shares with the other ranks, for init(ExternalBootstrap):
// torch.distributed hands its backends one (c10d::Store over torchrun's MASTER_PORT), and a second
// rendezvous of libdtrain's own on that port would fight torch's TCPStore for it. libdtrain's ranks
// then exchange their socket addresses through this store and listen on ports the system picks.
// Calls come from the thread running init(); an exception thrown here fails init() with its text.
class DTRAIN_API BootstrapStore {
 public:
  BootstrapStore() = default;
  BootstrapStore(const BootstrapStore&) = delete;
  BootstrapStore& operator=(const BootstrapStore&) = delete;
  virtual ~BootstrapStore();
  virtual void set(const std::string& key, const std::string& value) = 0;
  // Blocks until `key` is set by some rank and returns its value; throws when it is not set within
  // `timeout`.
  virtual std::string get(const std::string& key, std::chrono::milliseconds timeout) = 0;
};

// A place in a job that the caller found: rank and size, and the store the ranks share.
struct ExternalBootstrap {
  int rank = 0;
  int size = 1;
  std::shared_ptr<BootstrapStore> store;  // required when size > 1
  // The deadline of the store's gets and of every collective, instead of DTRAIN_TIMEOUT: the
  // caller's own (torch's init_process_group(timeout=...)). Must be positive.
  std::optional<std::chrono::milliseconds> timeout = std::nullopt;
};

// Bootstraps from what the caller found instead of the environment: WorldInfo::bootstrap is
// "external", and with several ranks the communicator is libdtrain's TCP sockets (shared memory on
// one node, the hierarchy across nodes, as after a torchrun-style launch), addresses exchanged
// through `store`; DTRAIN_TRANSPORT=mpi is an error. The DTRAIN_* settings are read as init()
// reads them, but the rank map is not applied (WorldInfo::affinity says so): the caller is a
// program already running its threads (torch's), and only a launcher knows the local rank. Each
// call makes an independent Context (one per torch process group), so several may live at once.
// Throws Error (kInvalid) naming a bad rank, size, timeout or missing store.
DTRAIN_API Context init(const ExternalBootstrap& bootstrap);

// The NCCL that device_comm() uses. libdtrain does not link NCCL or CUDA: it loads
// libcudart.so.<CUDA major> and libnccl.so.2 with dlopen (LD_LIBRARY_PATH, then ld.so.cache) the
// first time either this or device_comm() is called, so a build with NCCL runs on nodes without
// them. Needs no GPU and no init().
struct NcclLibrary {
  std::string version;  // "2.28.9", from ncclGetVersion
  std::string file;     // the file loaded, e.g. "/usr/lib/x86_64-linux-gnu/libnccl.so.2"
};
// Throws Error (kInvalid) when libdtrain was built without NCCL, or naming the library, the
// loader's reason and what to do when it cannot be loaded or lacks a function libdtrain calls.
DTRAIN_API NcclLibrary nccl_library();

// The CUDA device that holds `ptr` (device or managed memory, cudaPointerGetAttributes), or -1 for
// host memory (pageable or pinned): what a caller checks before handing a pointer to device_comm().
// Loads the libraries as nccl_library() does and throws the same errors; Error (kInvalid) naming
// CUDA's error when the lookup fails (no device, a driver too old).
DTRAIN_API int cuda_pointer_device(const void* ptr);

}  // namespace dtrain

#include "dtrain/checkpoint.hpp"
#include "dtrain/meter.hpp"
#include "dtrain/preemption.hpp"
#include "dtrain/shard.hpp"
