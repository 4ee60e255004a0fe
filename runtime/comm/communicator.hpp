// The backend side of dtrain::Comm: one abstract Communicator, one implementation per backend
// (single process, MPI), chosen by init(). The public Comm validates arguments (null buffers,
// overlap, kAvg on integers, root range) before a backend sees them, so backends only move data.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm/peer_alarm.hpp"
#include "comm/peer_watch.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

inline bool is_floating(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 ||
         t == DType::kBFloat16;
}
inline bool is_16bit_float(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

// One buffer of a many-buffer allreduce: `count` elements from `in` reduced into `out` (`in ==
// out`: in place).
struct AllreducePart {
  const void* in;
  void* out;
  std::size_t count;
};

class Communicator {
 public:
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  virtual ~Communicator() = default;

  // `in == out` is in place. kAvg arrives only for floating types.
  virtual void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op) = 0;
  // Many buffers reduced as one message, each result written straight to its part's `out`.
  // Returns false, doing nothing, when the backend has no such path (the caller then packs the
  // parts into one buffer itself).
  virtual bool allreduce_parts(std::span<const AllreducePart> parts, DType type, ReduceOp op) {
    (void)parts;
    (void)type;
    (void)op;
    return false;
  }
  virtual void broadcast(void* buf, std::size_t count, DType type, int root) = 0;
  // `out` holds size * count elements, rank r's `count` at r * count. `in` may be out + rank *
  // count (in place).
  virtual void allgather(const void* in, void* out, std::size_t count, DType type) = 0;
  // `in` holds size * count elements; `out` receives this rank's block of the reduction, `count`
  // elements. `in == out` is in place (the result lands at the start of the buffer).
  virtual void reduce_scatter(const void* in, void* out, std::size_t count, DType type,
                              ReduceOp op) = 0;
  virtual void barrier() = 0;
  virtual std::string_view backend() const = 0;
  // The path allreduces take now: "shared memory" when every rank is on this node and the ranks
  // agreed on it, else the backend's own messages (its name).
  virtual std::string_view allreduce_transport() const { return backend(); }

  // False when no call can wait on another process (one rank): the Engine then runs calls inline.
  virtual bool remote() const { return true; }
  // After a timeout: a call is stuck for good, so release nothing that would call into the
  // library again (no MPI_Finalize).
  virtual void abandon() noexcept {}
  // True when every call gives up by itself at the deadline (sockets with poll): the Engine then
  // waits a little longer, so that the backend's message, which names the peer, wins.
  virtual bool enforces_deadline() const { return false; }
  // The ranks a stuck collective waits for, when the transport can tell ("" when it cannot).
  virtual std::string missing_ranks() const { return ""; }
  // The processes of this node's ranks (this one included), when the launcher ends the whole job
  // about a second after one rank dies, too soon for a collective's error to reach the user (MPI
  // launchers): the Engine then watches them and reports a lost one itself (peer_watch.hpp).
  // Empty when the backend names a lost peer by itself (TCP) or has no peers.
  virtual std::vector<PeerProcess> node_processes() const { return {}; }
  // This rank's side of the peer alarm (peer_alarm.hpp), for the Engine's PeerWatch to own, when
  // some ranks cannot see each other's processes end (other nodes); null afterwards and otherwise.
  virtual std::unique_ptr<PeerAlarm> take_peer_alarm() { return nullptr; }
  // True once a peer's exit is no loss: the job's shutdown has begun (MPI is finalized).
  virtual bool peers_may_exit() const { return false; }

  // True when an allreduce of `bytes` of `type` waits only by polling nonblocking calls, calling
  // poll() between tests: the Engine may then run it on the caller's thread, where poll() enforces
  // the deadline, instead of paying the progress thread's two wake-ups.
  virtual bool allreduce_polls(std::size_t bytes, DType type) const {
    (void)bytes;
    (void)type;
    return false;
  }
  // While set, poll() calls `check`, which throws to abandon the call. Null: poll() does nothing.
  void set_poll_check(const std::function<void()>* check) { poll_check_ = check; }

 protected:
  void poll() const {
    if (poll_check_ != nullptr) (*poll_check_)();
  }

 private:
  const std::function<void()>* poll_check_ = nullptr;
};

// One rank: an allreduce copies `in` to `out`, a broadcast and a barrier do nothing.
std::unique_ptr<Communicator> make_single_communicator();

// MPI over host memory, for a world of more than one rank. Initializes MPI when the process has
// not (and then finalizes it on destruction); checks that MPI sees the same rank and size as the
// bootstrap. Throws Error (kComm) when MPI fails.
// `owns_mpi`: MPI was initialized by the MPI bootstrap (mpi_world) and is finalized with the
// communicator.
std::unique_ptr<Communicator> make_mpi_communicator(const WorldInfo& world, bool owns_mpi = false);

// The MPI bootstrap (for MPI launchers without PMIx): initializes MPI and reads the world from it
// (the local rank and size from MPI_Comm_split_type). Lives beside the MPI communicator because
// mpi.h is included by one file only. `initialized_here`: whether this call started MPI.
WorldInfo mpi_world(bool* initialized_here);

// Reduces `count` elements of `src` into `dst` (dst = dst op src), for host-side reductions of the
// TCP backend. kAvg sums (the caller divides). float16/bfloat16 go through float.
void reduce_into(void* dst, const void* src, std::size_t count, DType type, ReduceOp op);
// out = a op b, elementwise, for `count` elements; `out` may alias `a` or `b`. Keeping the operand
// order fixed (the lower rank's data as `a`) gives every rank the same bits even where op is not
// symmetric in its bits (std::min/max with a NaN).
void reduce_to(void* out, const void* a, const void* b, std::size_t count, DType type, ReduceOp op);
// Divides `count` floating elements by `n` (the kAvg step).
void divide_by(void* buf, std::size_t count, DType type, int n);

// DTRAIN_SHM: whether allreduces may go through shared memory (ShmAllreduce) when every rank is
// on one node. On by default; "0" keeps them on the backend's own transport. Throws Error
// (kInvalid) naming the variable for any other value.
bool shm_allowed_by_env();

// The byte count in environment variable `name`, or `fallback` when it is unset or empty. Throws
// Error (kInvalid) naming the variable when it is not a whole number of at least `minimum`.
std::size_t byte_count_from_env(const char* name, std::size_t fallback, std::size_t minimum);

// True once MPI_Finalize has run in this process: MPI cannot start again, so neither can a
// multi-rank Context (nor, in practice, a PMIx session: its job data are gone).
bool mpi_finalized();
// Throws the Error that says so, with `detail` (a later failure it explains) appended.
[[noreturn]] void throw_finalized(const std::string& detail);

}  // namespace dtrain::runtime
