// The backend side of dtrain::Comm: the one interface every backend implements (single process,
// MPI, TCP, NCCL; init() and Context::device_comm() choose). The public Comm (comm.cpp) validates
// arguments (null buffers, overlap, kAvg on integers, root range) before a backend sees them, so
// backends only move data. The factories are beside each backend; the host-side reduction kernels
// they share are in reduce.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm/lost_peers/peer_alarm.hpp"
#include "comm/lost_peers/peer_watch.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

class Mailbox;
class MessageSpace;

// One buffer of a many-buffer allreduce: `count` elements from `in` reduced into `out` (`in ==
// out`: in place).
struct AllreducePart {
  const void* in;
  void* out;
  std::size_t count;
};

// kAvg is finished in one place, this class: the reductions are public non-virtual calls that
// hand a backend kSum for kAvg and divide the sum by the number of ranks afterwards (divide_by),
// unless the backend averages that type itself (averages()). So no backend divides twice or never,
// and every caller (Comm, FusedAllreduce) gets the same average.
class Communicator {
 public:
  // `size`: the number of ranks, which an average divides by.
  explicit Communicator(int size) : size_(size) {}
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  virtual ~Communicator() = default;

  // `in == out` is in place. kAvg arrives only for floating types.
  void allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op);
  // Many buffers reduced as one message, each result written straight to its part's `out`.
  // Returns false, doing nothing, when the backend has no such path (the caller then packs the
  // parts into one buffer itself).
  bool allreduce_parts(std::span<const AllreducePart> parts, DType type, ReduceOp op);
  // `in` holds size * count elements; `out` receives this rank's block of the reduction, `count`
  // elements. `in == out` is in place (the result lands at the start of the buffer).
  void reduce_scatter(const void* in, void* out, std::size_t count, DType type, ReduceOp op);

  virtual void broadcast(void* buf, std::size_t count, DType type, int root) = 0;
  // `out` holds size * count elements, rank r's `count` at r * count. `in` may be out + rank *
  // count (in place).
  virtual void allgather(const void* in, void* out, std::size_t count, DType type) = 0;
  virtual void barrier() = 0;
  virtual std::string_view backend() const = 0;
  // The path allreduces take now: "shared memory" when every rank is on this node and the ranks
  // agreed on it, else the backend's own messages (its name).
  virtual std::string_view allreduce_transport() const { return backend(); }

  // Its point-to-point messages (point_to_point/mailbox.hpp), or null when it has none, and the
  // ranks and tags they use there (message_space.hpp: the world's, unless a sub-communicator).
  virtual Mailbox* mailbox() { return nullptr; }
  virtual const MessageSpace& message_space() const;
  // Called by the Engine as collective number `seq` begins, before the backend's call: a
  // backend whose messages carry the call's number (a sub-communicator's) keeps it.
  virtual void begin_call(std::uint64_t seq) { (void)seq; }

  // The CUDA device whose memory the collectives take (NCCL), or -1 for host memory: callers
  // that check a buffer's place before a call (the Python module) compare with it.
  virtual int device() const { return -1; }
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
  // The reductions proper, as the public calls above describe them; `op` is kAvg only when
  // averages(type).
  virtual void do_allreduce(const void* in, void* out, std::size_t count, DType type,
                            ReduceOp op) = 0;
  virtual bool do_allreduce_parts(std::span<const AllreducePart> parts, DType type, ReduceOp op) {
    (void)parts;
    (void)type;
    (void)op;
    return false;
  }
  virtual void do_reduce_scatter(const void* in, void* out, std::size_t count, DType type,
                                 ReduceOp op) = 0;
  // True when the backend computes kAvg of `type` itself and wants it passed on: NCCL (ncclAvg),
  // one rank (a copy), MPI's float16/bfloat16 (divided in float, before rounding back).
  virtual bool averages(DType type) const {
    (void)type;
    return false;
  }

  void poll() const {
    if (poll_check_ != nullptr) (*poll_check_)();
  }

 private:
  // Whether `op` reaches the backend as kSum, its result divided here.
  bool divides(DType type, ReduceOp op) const { return op == ReduceOp::kAvg && !averages(type); }

  int size_;
  const std::function<void()>* poll_check_ = nullptr;
};

}  // namespace dtrain::runtime
