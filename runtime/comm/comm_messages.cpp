// dtrain::Comm's point-to-point messages (the mailbox, point_to_point/mailbox.hpp) and the
// collectives built on them (algorithms/message_schedules.hpp): gather, scatter, reduce, alltoall
// and alltoallv, each run by the Engine as any collective, its messages tagged by its number.
#include <string>
#include <vector>

#include "comm/algorithms/message_schedules.hpp"
#include "comm/algorithms/reduce.hpp"
#include "comm/call_arguments.hpp"
#include "comm/call_check.hpp"
#include "comm/engine.hpp"
#include "comm/point_to_point/mailbox.hpp"
#include "comm/point_to_point/message_space.hpp"

namespace dtrain {
namespace {

using runtime::check_overlap;
using runtime::check_reduce;
using runtime::check_root;
using runtime::require_buffer;

// The communicator's mailbox, or Error (kInvalid) naming the backend that has none.
runtime::Mailbox& mailbox_of(runtime::Engine& e, const char* op) {
  if (runtime::Mailbox* m = e.backend().mailbox()) return *m;
  throw Error(Error::Code::kInvalid,
              std::string("dtrain: ") + op + ": the " + std::string(e.backend().backend()) +
                  " backend has no point-to-point messages yet; expected the tcp or mpi backend "
                  "(ctx.comm()) or a single process");
}

// `peer` names a rank of the communicator (or, for a receive, kAnySource); `tag` is >= 0 (the
// negative ones are kept for libdtrain's own schedules).
void check_message(const void* buf, std::size_t count, int peer, int tag, int size, bool receives,
                   const char* op) {
  require_buffer(buf, count, op, "data");
  const bool any = receives && peer == Comm::kAnySource;
  if (!any && (peer < 0 || peer >= size)) {
    throw Error(Error::Code::kInvalid,
                std::string("dtrain: ") + op + ": " + (receives ? "source" : "destination") +
                    " rank out of range; expected 0 to " + std::to_string(size - 1) +
                    (receives ? " or kAnySource (-1)" : "") + ", got " + std::to_string(peer));
  }
  if (tag < 0) {
    throw Error(Error::Code::kInvalid, std::string("dtrain: ") + op +
                                           ": tag; expected 0 or more, got " + std::to_string(tag));
  }
}

// The schedules over `e`'s mailbox, in its communicator's numbering.
runtime::MessageSchedules schedules(runtime::Engine& e, const char* op) {
  return runtime::MessageSchedules(mailbox_of(e, op), e.backend().message_space(), e.rank(),
                                   e.size(), e.settings().deadline());
}

// The header each message of a call carries, compared by its receives (call_check.hpp); the
// root as the communicator numbers it.
runtime::CallHeader call(std::size_t count, runtime::CallWhat::Kind kind, DType type,
                         ReduceOp op = ReduceOp::kSum, int root = 0) {
  return runtime::CallHeader::of(count, {kind, type, op, static_cast<std::uint32_t>(root)});
}

// An all-to-all's per-rank counts and offsets (elements), checked and in bytes.
struct Blocks {
  std::vector<std::size_t> bytes;
  std::vector<std::size_t> offsets;
  std::size_t end = 0;  // bytes the buffer must hold
};

Blocks blocks(std::span<const std::size_t> counts, std::span<const std::size_t> offsets, DType type,
              int size, const char* op, const char* which) {
  const auto n = static_cast<std::size_t>(size);
  if (counts.size() != n || offsets.size() != n) {
    throw Error(Error::Code::kInvalid,
                std::string("dtrain: ") + op + ": " + which + " counts and offsets; expected " +
                    std::to_string(n) + " of each (one per rank), got " +
                    std::to_string(counts.size()) + " and " + std::to_string(offsets.size()));
  }
  Blocks b;
  const std::size_t unit = dtype_size(type);
  for (std::size_t r = 0; r < n; ++r) {
    b.bytes.push_back(counts[r] * unit);
    b.offsets.push_back(offsets[r] * unit);
    b.end = std::max(b.end, (offsets[r] + counts[r]) * unit);
  }
  return b;
}

}  // namespace

void Comm::send(const void* buf, std::size_t count, DType type, int dst, int tag) {
  isend(buf, count, type, dst, tag).wait();
}

int Comm::recv(void* buf, std::size_t count, DType type, int src, int tag) {
  Work w = irecv(buf, count, type, src, tag);
  w.wait();
  return w.source();
}

Work Comm::isend(const void* buf, std::size_t count, DType type, int dst, int tag) {
  check_message(buf, count, dst, tag, size(), false, "send");
  runtime::Mailbox& m = mailbox_of(*engine_, "send");
  const runtime::MessageSpace& space = engine_->backend().message_space();
  return Work(engine_, m.send(buf, count * dtype_size(type), space.world(dst), space.user_tag(tag),
                              space.group_of(), engine_->settings().deadline()));
}

Work Comm::irecv(void* buf, std::size_t count, DType type, int src, int tag) {
  check_message(buf, count, src, tag, size(), true, "recv");
  runtime::Mailbox& m = mailbox_of(*engine_, "recv");
  const runtime::MessageSpace& space = engine_->backend().message_space();
  return Work(engine_,
              m.receive(buf, count * dtype_size(type), space.world(src), space.user_tag(tag),
                        space.group_of(), engine_->settings().deadline()));
}

int Work::source() const {
  if (!pending_ || !pending_->done.load(std::memory_order_acquire)) return -1;
  return pending_->source.load();
}

Work Comm::gather_async(const void* in, void* out, std::size_t count, DType type, int root) {
  check_root(root, size(), "gather");
  const std::size_t bytes = count * dtype_size(type);
  require_buffer(in, count, "gather", "input");
  if (rank() == root) {
    require_buffer(out, count * static_cast<std::size_t>(size()), "gather", "output");
    const char* mine = static_cast<const char*>(out) + bytes * static_cast<std::size_t>(root);
    check_overlap(in, out, bytes, bytes * static_cast<std::size_t>(size()), mine, "gather", [] {
      return std::string(
          "the input at the root's block of the output (in place) or disjoint "
          "buffers");
    });
  }
  runtime::Engine* e = engine_;
  const runtime::MessageSpace& space = e->backend().message_space();
  runtime::MessageSchedules s = schedules(*e, "gather");
  s.set_call(call(count, runtime::CallWhat::Kind::kGather, type, ReduceOp::kSum, root));
  return Work(e, e->submit_numbered("gather", bytes, [=, &space](std::uint64_t seq) mutable {
    s.gather(in, out, bytes, root, space.call_tag(seq));
  }));
}

Work Comm::scatter_async(const void* in, void* out, std::size_t count, DType type, int root) {
  check_root(root, size(), "scatter");
  const std::size_t bytes = count * dtype_size(type);
  require_buffer(out, count, "scatter", "output");
  if (rank() == root) {
    require_buffer(in, count * static_cast<std::size_t>(size()), "scatter", "input");
    const char* mine = static_cast<const char*>(in) + bytes * static_cast<std::size_t>(root);
    // In place: the output is the root's own block of the input.
    check_overlap(out, in, bytes, bytes * static_cast<std::size_t>(size()), mine, "scatter", [] {
      return std::string(
          "the output at the root's block of the input (in place) or disjoint "
          "buffers");
    });
  }
  runtime::Engine* e = engine_;
  const runtime::MessageSpace& space = e->backend().message_space();
  runtime::MessageSchedules s = schedules(*e, "scatter");
  s.set_call(call(count, runtime::CallWhat::Kind::kScatter, type, ReduceOp::kSum, root));
  return Work(e, e->submit_numbered("scatter", bytes, [=, &space](std::uint64_t seq) mutable {
    s.scatter(in, out, bytes, root, space.call_tag(seq));
  }));
}

Work Comm::reduce_async(const void* in, void* out, std::size_t count, DType type, ReduceOp op,
                        int root) {
  check_root(root, size(), "reduce");
  check_reduce(type, op, "reduce");
  const std::size_t bytes = count * dtype_size(type);
  require_buffer(in, count, "reduce", "input");
  if (rank() == root) {
    require_buffer(out, count, "reduce", "output");
    check_overlap(in, out, bytes, bytes, out, "reduce", runtime::same_or_disjoint);
  }
  runtime::Engine* e = engine_;
  const runtime::MessageSpace& space = e->backend().message_space();
  runtime::MessageSchedules s = schedules(*e, "reduce");
  s.set_call(call(count, runtime::CallWhat::Kind::kReduce, type, op, root));
  const bool average = op == ReduceOp::kAvg;
  const int n = size();
  const bool root_here = rank() == root;
  return Work(e, e->submit_numbered("reduce", bytes, [=, &space](std::uint64_t seq) mutable {
    s.reduce(in, out, count, type, average ? ReduceOp::kSum : op, root, space.call_tag(seq));
    if (average && root_here) runtime::divide_by(out, count, type, n);
  }));
}

Work Comm::alltoall_async(const void* in, void* out, std::size_t count, DType type) {
  const std::vector<std::size_t> counts(static_cast<std::size_t>(size()), count);
  std::vector<std::size_t> offsets(counts.size());
  for (std::size_t r = 0; r < offsets.size(); ++r) offsets[r] = r * count;
  return alltoallv_async(in, counts, offsets, out, counts, offsets, type);
}

Work Comm::alltoallv_async(const void* in, std::span<const std::size_t> send_counts,
                           std::span<const std::size_t> send_offsets, void* out,
                           std::span<const std::size_t> recv_counts,
                           std::span<const std::size_t> recv_offsets, DType type) {
  Blocks send = blocks(send_counts, send_offsets, type, size(), "alltoallv", "send");
  Blocks recv = blocks(recv_counts, recv_offsets, type, size(), "alltoallv", "receive");
  const std::size_t unit = dtype_size(type);
  require_buffer(in, send.end / unit, "alltoallv", "input");
  require_buffer(out, recv.end / unit, "alltoallv", "output");
  // No in-place form: a block received could overwrite one not sent yet.
  check_overlap(in, out, send.end, recv.end, nullptr, "alltoallv",
                [] { return std::string("disjoint buffers"); });
  runtime::Engine* e = engine_;
  const runtime::MessageSpace& space = e->backend().message_space();
  runtime::MessageSchedules s = schedules(*e, "alltoallv");
  s.set_call(call(0, runtime::CallWhat::Kind::kAlltoallv, type));
  return Work(e, e->submit_numbered("alltoallv", send.end,
                                    [=, send = std::move(send),
                                     recv = std::move(recv)](std::uint64_t seq) mutable {
                                      s.alltoallv(in, send.bytes, send.offsets, out, recv.bytes,
                                                  recv.offsets, space.call_tag(seq));
                                    }));
}

void Comm::gather(const void* in, void* out, std::size_t count, DType type, int root) {
  gather_async(in, out, count, type, root).wait();
}
void Comm::scatter(const void* in, void* out, std::size_t count, DType type, int root) {
  scatter_async(in, out, count, type, root).wait();
}
void Comm::reduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op, int root) {
  reduce_async(in, out, count, type, op, root).wait();
}
void Comm::alltoall(const void* in, void* out, std::size_t count, DType type) {
  alltoall_async(in, out, count, type).wait();
}
void Comm::alltoallv(const void* in, std::span<const std::size_t> send_counts,
                     std::span<const std::size_t> send_offsets, void* out,
                     std::span<const std::size_t> recv_counts,
                     std::span<const std::size_t> recv_offsets, DType type) {
  alltoallv_async(in, send_counts, send_offsets, out, recv_counts, recv_offsets, type).wait();
}

}  // namespace dtrain
