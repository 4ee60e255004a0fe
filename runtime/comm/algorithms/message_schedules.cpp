#include "comm/algorithms/message_schedules.hpp"

#include <cstring>
#include <memory>
#include <vector>

#include "comm/algorithms/reduce.hpp"
#include "comm/point_to_point/mailbox.hpp"
#include "comm/point_to_point/message_space.hpp"

namespace dtrain::runtime {
namespace {

using Messages = std::vector<std::shared_ptr<Pending>>;

// Waits for `m` to its deadline, keeping the first failure in `first`.
void wait_keeping(Pending& m, std::exception_ptr& first) {
  try {
    Mailbox::wait(m);
  } catch (...) {
    if (!first) first = std::current_exception();
  }
}

// Waits for every message, each to its deadline; the first failure (or `first`, one before) is
// rethrown once all have ended, so that no message still uses a buffer of the call when it
// returns.
void wait_all(Messages& messages, std::exception_ptr first = nullptr) {
  for (const auto& m : messages) wait_keeping(*m, first);
  if (first) std::rethrow_exception(first);
}

// An alltoall's sends (every block one size) in flight at once. Why a window, and why 2: with
// every send of equal blocks posted at once, 8 nodes' alltoall over 1 Gbit/s links (namespace
// cluster, docs/benchmarks.md) reached 0.92 of the link's limit at best and less than half in
// about one run in four, each node's link taking 7 streams at once and the kernel timing some
// out (TCPTimeouts); 2 at a time, in the staggered order, 0.94-0.97 and 1.00-1.03 x Open MPI's
// time in each of 4 runs, and the same as before on 2 x 2 and 4 x 1. Uneven blocks (alltoallv)
// keep every send in flight: windowed, a rank with large blocks holds its window while the
// others' links idle (0.81-0.84 of the limit against 0.98-1.00). Only for blocks of at least
// kWindowFrom: a small block's send leaves at once, and one to a rank not yet in the call waits
// for its receive (Mailbox::kParkAbove, kParkFor), so a window would put those waits in a row;
// Open MPI's alltoall, too, goes pairwise only for large blocks.
constexpr std::size_t kEqualBlocksInFlight = 2;
constexpr std::size_t kWindowFrom = std::size_t{1} << 20;

// Whether every nonzero block of `bytes` but rank `self`'s is one size, at least kWindowFrom.
bool large_equal_blocks(std::span<const std::size_t> bytes, int self) {
  std::size_t size = 0;
  for (std::size_t r = 0; r < bytes.size(); ++r) {
    if (static_cast<int>(r) == self || bytes[r] == 0) continue;
    if (size != 0 && bytes[r] != size) return false;
    size = bytes[r];
  }
  return size >= kWindowFrom;
}

void copy(void* to, const void* from, std::size_t bytes) {
  if (to != from && bytes > 0) std::memmove(to, from, bytes);
}

}  // namespace

std::shared_ptr<Pending> MessageSchedules::send(const void* buf, std::size_t bytes, int to,
                                                std::int64_t tag) {
  return mailbox_.send(buf, bytes, space_.world(to), tag, space_.group_of(), timeout_, call_);
}

std::shared_ptr<Pending> MessageSchedules::receive(void* buf, std::size_t bytes, int from,
                                                   std::int64_t tag) {
  return mailbox_.receive(buf, bytes, space_.world(from), tag, space_.group_of(), timeout_, call_);
}

void MessageSchedules::gather(const void* in, void* out, std::size_t bytes, int root,
                              std::int64_t tag) {
  if (rank_ != root) {
    auto m = send(in, bytes, root, tag);
    Mailbox::wait(*m);
    return;
  }
  Messages messages;
  char* o = static_cast<char*>(out);
  for (int r = 0; r < size_; ++r) {
    if (r != root) messages.push_back(receive(o + bytes * r, bytes, r, tag));
  }
  copy(o + bytes * root, in, bytes);
  wait_all(messages);
}

void MessageSchedules::scatter(const void* in, void* out, std::size_t bytes, int root,
                               std::int64_t tag) {
  if (rank_ != root) {
    auto m = receive(out, bytes, root, tag);
    Mailbox::wait(*m);
    return;
  }
  Messages messages;
  const char* i = static_cast<const char*>(in);
  for (int k = 1; k < size_; ++k) {
    const int r = (root + k) % size_;
    messages.push_back(send(i + bytes * r, bytes, r, tag));
  }
  copy(out, i + bytes * root, bytes);
  wait_all(messages);
}

void MessageSchedules::reduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op,
                              int root, std::int64_t tag) {
  const std::size_t bytes = count * dtype_size(type);
  // Ranks renumbered so that the root is 0: a child is `me + mask` while `mask` is below the
  // lowest set bit of `me`; the parent clears that bit.
  const int me = (rank_ - root + size_) % size_;
  const auto real = [&](int v) { return (v + root) % size_; };
  // The running combination: the root's `out`, another rank's scratch (its `out` is not written).
  std::vector<char> scratch;
  char* acc = static_cast<char*>(out);
  if (me != 0) {
    scratch.resize(bytes);
    acc = scratch.data();
  }
  copy(acc, in, bytes);
  std::vector<char> child(bytes);
  int mask = 1;
  for (; mask < size_ && (me & mask) == 0; mask <<= 1) {
    if (me + mask >= size_) continue;
    auto m = receive(child.data(), bytes, real(me + mask), tag);
    Mailbox::wait(*m);
    reduce_into(acc, child.data(), count, type, op);
  }
  if (me != 0) {
    auto m = send(acc, bytes, real(me - mask), tag);
    Mailbox::wait(*m);
  }
}

void MessageSchedules::alltoallv(const void* in, std::span<const std::size_t> send_bytes,
                                 std::span<const std::size_t> send_offsets, void* out,
                                 std::span<const std::size_t> recv_bytes,
                                 std::span<const std::size_t> recv_offsets, std::int64_t tag) {
  const char* i = static_cast<const char*>(in);
  char* o = static_cast<char*>(out);
  const auto at = [](std::span<const std::size_t> v, int r) {
    return v[static_cast<std::size_t>(r)];
  };
  Messages messages;
  for (int k = 1; k < size_; ++k) {
    const int from = (rank_ - k + size_) % size_;
    if (at(recv_bytes, from) > 0) {
      messages.push_back(receive(o + at(recv_offsets, from), at(recv_bytes, from), from, tag));
    }
  }
  const std::size_t window = large_equal_blocks(send_bytes, rank_)
                                 ? kEqualBlocksInFlight
                                 : static_cast<std::size_t>(size_);
  Messages sends;
  std::size_t sent = 0;  // sends waited for (the window's start)
  std::exception_ptr first;
  for (int k = 1; k < size_; ++k) {
    const int to = (rank_ + k) % size_;
    if (at(send_bytes, to) == 0) continue;
    if (sends.size() - sent >= window) wait_keeping(*sends[sent++], first);
    sends.push_back(send(i + at(send_offsets, to), at(send_bytes, to), to, tag));
  }
  messages.insert(messages.end(), sends.begin() + static_cast<std::ptrdiff_t>(sent), sends.end());
  if (at(send_bytes, rank_) != at(recv_bytes, rank_)) {
    wait_all(messages, first);
    throw Error(Error::Code::kInvalid, "dtrain: alltoallv: this rank's block to itself: " +
                                           std::to_string(at(send_bytes, rank_)) + " bytes sent, " +
                                           std::to_string(at(recv_bytes, rank_)) +
                                           " expected; expected equal sizes");
  }
  copy(o + at(recv_offsets, rank_), i + at(send_offsets, rank_), at(send_bytes, rank_));
  wait_all(messages, first);
}

}  // namespace dtrain::runtime
