// Collectives built on a communicator's point-to-point messages (point_to_point/mailbox.hpp), each
// moving a block only to the rank that needs it, where an emulation through allgather or broadcast
// sends every rank everything (at 1,024 ranks a 4 MiB gather moved 4 GiB into every rank):
//   gather, scatter: linear at the root, which receives (sends) one block per rank, the others one;
//   reduce: a binomial tree towards the root, log2(p) steps, one buffer per step;
//   alltoallv: every receive posted first, then the sends in a staggered order (rank + 1, + 2,
//     ...) so that no rank is every sender's first; empty blocks are not sent, so a rank
//     connects only to the peers it exchanges bytes with (an MoE layer's routing is sparse);
//     the pairs that do exchange bytes are connected, as an all-to-all needs. When every block
//     this rank sends is one size of 1 MiB or more (an alltoall of large blocks), at most
//     kEqualBlocksInFlight sends are in flight at once, in that order (the cpp says why).
// They run on the Engine's progress thread like every collective; each call's messages carry its
// own tag (MessageSpace::call_tag: negative, below the users' tags, so neither a user message nor
// another call matches them). Every rank passes the same call: each message carries the call's
// header (set_call; count, type, operation, root), and a receive whose sender passed another
// fails naming both ranks' calls; a block of the same call whose size differs from what its
// receiver expects fails that receive naming both sizes and both ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "comm/call_check.hpp"
#include "dtrain/dtrain.hpp"
#include "timeout.hpp"

namespace dtrain::runtime {

struct Pending;

class Mailbox;
class MessageSpace;

class MessageSchedules {
 public:
  // `rank` and `size` in `space`'s numbering (the world's, or a group's), which translates them
  // for the mailbox; both must outlive this. `timeout`: every message's deadline (the
  // communicator's).
  MessageSchedules(Mailbox& mailbox, const MessageSpace& space, int rank, int size, Timeout timeout)
      : mailbox_(mailbox), space_(space), rank_(rank), size_(size), timeout_(timeout) {}

  // What every message of the next calls carries and their receives compare (call_check.hpp).
  void set_call(const CallHeader& call) { call_ = call; }

  // `out` (the root's) receives rank r's `bytes` at r * bytes; `in` may be the root's own block
  // of `out` (in place).
  void gather(const void* in, void* out, std::size_t bytes, int root, std::int64_t tag);
  // Rank r receives block r of the root's `in` (size * bytes); the root's `out` may be its own
  // block of `in` (in place).
  void scatter(const void* in, void* out, std::size_t bytes, int root, std::int64_t tag);
  // The root's `out` receives every rank's `in` combined (kAvg: summed; the caller divides).
  // `in == out` is in place. The others' `out` is not written.
  void reduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op, int root,
              std::int64_t tag);
  // Block r of `in` (send_bytes[r] at send_offsets[r]) goes to rank r, which receives it at its
  // recv_offsets[this rank] (recv_bytes[this rank] long). Offsets and sizes in bytes.
  void alltoallv(const void* in, std::span<const std::size_t> send_bytes,
                 std::span<const std::size_t> send_offsets, void* out,
                 std::span<const std::size_t> recv_bytes, std::span<const std::size_t> recv_offsets,
                 std::int64_t tag);

 private:
  // The mailbox's calls in this communicator's numbering.
  std::shared_ptr<Pending> send(const void* buf, std::size_t bytes, int to, std::int64_t tag);
  std::shared_ptr<Pending> receive(void* buf, std::size_t bytes, int from, std::int64_t tag);

  Mailbox& mailbox_;
  const MessageSpace& space_;
  int rank_;
  int size_;
  Timeout timeout_;
  CallHeader call_;
};

}  // namespace dtrain::runtime
