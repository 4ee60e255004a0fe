// dtrain::Comm, the public handle: argument checks shared by every backend, then a call of the
// backend through the Engine. Also the small DType/ReduceOp helpers.
#include <functional>
#include <string>
#include <string_view>

#include "comm/algorithms/reduce.hpp"
#include "comm/communicator.hpp"
#include "comm/engine.hpp"
#include "comm/point_to_point/mailbox.hpp"
#include "dtrain/interrupt.hpp"

namespace dtrain {

std::size_t dtype_size(DType type) {
  switch (type) {
    case DType::kUInt8:
      return 1;
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kFloat32:
    case DType::kInt32:
      return 4;
    case DType::kFloat64:
    case DType::kInt64:
      return 8;
  }
  throw Error(Error::Code::kInvalid,
              "dtrain: dtype: unknown value; expected kFloat32, kFloat64, kInt32, kInt64, kUInt8, "
              "kFloat16 or kBFloat16, got " +
                  std::to_string(static_cast<int>(type)));
}

std::string_view to_string(DType type) {
  switch (type) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kUInt8:
      return "uint8";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
  }
  return "unknown";
}

std::string_view to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "kSum";
    case ReduceOp::kAvg:
      return "kAvg";
    case ReduceOp::kMin:
      return "kMin";
    case ReduceOp::kMax:
      return "kMax";
    case ReduceOp::kProduct:
      return "kProduct";
  }
  return "unknown";
}

namespace {

// Throws Error (kInvalid) for an op the type does not support: kAvg on integers. `name`: the
// collective called, for the message.
void check_reduce(DType type, ReduceOp op, const char* name) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMin:
    case ReduceOp::kMax:
    case ReduceOp::kProduct:
      return;
    case ReduceOp::kAvg:
      // An integer average would have to round, and every rank would silently lose the
      // remainder; the caller should sum and divide as it sees fit.
      if (runtime::is_floating(type)) return;
      throw Error(Error::Code::kInvalid,
                  std::string("dtrain: ") + name +
                      ": kAvg is defined for floating types; "
                      "expected float32, float64, float16 or bfloat16 (or kSum), got " +
                      std::string(to_string(type)));
  }
  throw Error(Error::Code::kInvalid,
              std::string("dtrain: ") + name +
                  ": unknown reduce op; expected kSum, kAvg, kMin, kMax or kProduct, got " +
                  std::to_string(static_cast<int>(op)));
}

void require_buffer(const void* p, std::size_t count, const char* op, const char* which) {
  if (p == nullptr && count > 0) {
    throw Error(Error::Code::kInvalid, std::string("dtrain: ") + op + ": " + which +
                                           " buffer; expected a pointer to " +
                                           std::to_string(count) + " elements, got null");
  }
}

// Throws Error (kInvalid) when the input and output overlap other than in the collective's one
// in-place form, where the input starts at `in_place` (inside the output); `expected` says which
// form that is. Each collective has its own: allreduce and reduce_scatter `in == out`
// (MPI_IN_PLACE: reduce_scatter's result is the first block), allgather this rank's block of the
// output. Any other overlap is refused, whatever the backend would make of it: MPI (and memcpy)
// leave it undefined, and taking `in == out` as in place for allgather too gave rank 1 rank 0's
// data under MPI. The rule reads only this rank's own arguments, so ranks that pass the same
// layout fail alike, before anything is sent.
template <typename Expected>
void check_overlap(const void* in, const void* out, std::size_t in_bytes, std::size_t out_bytes,
                   const void* in_place, const char* op, Expected expected) {
  if (in == in_place || in_bytes == 0 || out_bytes == 0) return;
  // std::less gives a total order on unrelated pointers, where < would not.
  const auto* a = static_cast<const char*>(in);
  const auto* b = static_cast<const char*>(out);
  const std::less<const char*> before;
  if (before(a, b + out_bytes) && before(b, a + in_bytes)) {
    throw Error(Error::Code::kInvalid, std::string("dtrain: ") + op +
                                           ": input and output overlap; expected " + expected());
  }
}

std::string same_or_disjoint() { return "the same buffer (in place) or disjoint ones"; }

void check_allreduce(const void* in, const void* out, std::size_t count, DType type, ReduceOp op) {
  const std::size_t bytes = count * dtype_size(type);
  check_reduce(type, op, "allreduce");
  require_buffer(in, count, "allreduce", "input");
  require_buffer(out, count, "allreduce", "output");
  check_overlap(in, out, bytes, bytes, out, "allreduce", same_or_disjoint);
}

// The communicator's mailbox, or Error (kInvalid) naming the backend that has none.
runtime::Mailbox& mailbox_of(runtime::Engine& e, const char* op) {
  if (runtime::Mailbox* m = e.backend().mailbox()) return *m;
  throw Error(Error::Code::kInvalid,
              std::string("dtrain: ") + op + ": the " + std::string(e.backend().backend()) +
                  " backend has no point-to-point messages yet; expected the tcp backend "
                  "(DTRAIN_TRANSPORT=tcp, the default after PMIx and torchrun-style launches) or "
                  "a single process");
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

}  // namespace

void set_interrupt_check(Comm& comm, std::function<void()> check) {
  comm.engine().set_interrupt_check(std::move(check));
}

void Comm::allreduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op) {
  runtime::Engine* e = engine_;
  const std::size_t bytes = count * dtype_size(type);
  if (e->threaded() && e->backend().allreduce_polls(bytes, type)) {
    check_allreduce(in, out, count, type, op);
    if (e->run_inline("allreduce", bytes,
                      [&] { e->backend().allreduce(in, out, count, type, op); })) {
      return;
    }
  }
  allreduce_async(in, out, count, type, op).wait();
}
void Comm::broadcast(void* buf, std::size_t count, DType type, int root) {
  broadcast_async(buf, count, type, root).wait();
}
void Comm::allgather(const void* in, void* out, std::size_t count, DType type) {
  allgather_async(in, out, count, type).wait();
}
void Comm::reduce_scatter(const void* in, void* out, std::size_t count, DType type, ReduceOp op) {
  reduce_scatter_async(in, out, count, type, op).wait();
}
void Comm::barrier() {
  runtime::Engine* e = engine_;
  e->run("barrier", 0, [e] { e->backend().barrier(); });
}

Work Comm::allreduce_async(const void* in, void* out, std::size_t count, DType type, ReduceOp op) {
  const std::size_t bytes = count * dtype_size(type);
  check_allreduce(in, out, count, type, op);
  runtime::Engine* e = engine_;
  const bool polls = e->backend().allreduce_polls(bytes, type);
  return Work(
      e, e->submit(
             "allreduce", bytes, [=] { e->backend().allreduce(in, out, count, type, op); }, polls));
}

Work Comm::broadcast_async(void* buf, std::size_t count, DType type, int root) {
  const std::size_t bytes = count * dtype_size(type);
  require_buffer(buf, count, "broadcast", "data");
  if (root < 0 || root >= size()) {
    throw Error(Error::Code::kInvalid, "dtrain: broadcast: root rank out of range; expected 0 to " +
                                           std::to_string(size() - 1) + ", got " +
                                           std::to_string(root));
  }
  runtime::Engine* e = engine_;
  return Work(
      e, e->submit("broadcast", bytes, [=] { e->backend().broadcast(buf, count, type, root); }));
}

Work Comm::allgather_async(const void* in, void* out, std::size_t count, DType type) {
  const std::size_t bytes = count * dtype_size(type);
  const std::size_t all = bytes * static_cast<std::size_t>(size());
  require_buffer(in, count, "allgather", "input");
  require_buffer(out, count, "allgather", "output");
  const char* mine = static_cast<const char*>(out) + bytes * static_cast<std::size_t>(rank());
  check_overlap(in, out, bytes, all, mine, "allgather", [&] {
    return "the input at this rank's block of the output (in place: out + rank() * count, "
           "element " +
           std::to_string(count * static_cast<std::size_t>(rank())) + " for rank " +
           std::to_string(rank()) + ") or disjoint buffers";
  });
  runtime::Engine* e = engine_;
  return Work(e,
              e->submit("allgather", all, [=] { e->backend().allgather(in, out, count, type); }));
}

Work Comm::reduce_scatter_async(const void* in, void* out, std::size_t count, DType type,
                                ReduceOp op) {
  const std::size_t bytes = count * dtype_size(type);
  const std::size_t all = bytes * static_cast<std::size_t>(size());
  check_reduce(type, op, "reduce_scatter");
  require_buffer(in, count, "reduce_scatter", "input");
  require_buffer(out, count, "reduce_scatter", "output");
  check_overlap(in, out, all, bytes, out, "reduce_scatter", [] {
    return "the same buffer (in place: the result is its first block) or disjoint ones";
  });
  runtime::Engine* e = engine_;
  return Work(e, e->submit("reduce_scatter", all,
                           [=] { e->backend().reduce_scatter(in, out, count, type, op); }));
}

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
  return Work(engine_, m.send(buf, count * dtype_size(type), dst, tag));
}

Work Comm::irecv(void* buf, std::size_t count, DType type, int src, int tag) {
  check_message(buf, count, src, tag, size(), true, "recv");
  runtime::Mailbox& m = mailbox_of(*engine_, "recv");
  return Work(engine_, m.receive(buf, count * dtype_size(type), src, tag));
}

std::string_view Comm::backend() const { return engine_->backend().backend(); }
int Comm::device() const { return engine_->backend().device(); }
std::string_view Comm::allreduce_transport() const {
  return engine_->backend().allreduce_transport();
}
int Comm::rank() const { return engine_->rank(); }
int Comm::size() const { return engine_->size(); }
std::uint64_t Comm::next_sequence() const { return engine_->next_sequence(); }

void Work::wait() {
  if (pending_) engine_->wait(*pending_);
}
bool Work::test() { return !pending_ || engine_->test(*pending_); }
std::uint64_t Work::sequence() const { return pending_ ? pending_->seq : 0; }
int Work::source() const {
  if (!pending_ || !pending_->done.load(std::memory_order_acquire)) return -1;
  return pending_->source.load();
}

void Comm::throw_size_mismatch(std::size_t in, std::size_t out) {
  throw Error(Error::Code::kInvalid,
              "dtrain: allreduce: output size differs from input size; expected " +
                  std::to_string(in) + " elements, got " + std::to_string(out));
}

void Comm::throw_span_mismatch(const char* op, const char* which, std::size_t want,
                               std::size_t got) {
  const std::string other = std::string_view(which) == "input" ? "output" : "input";
  throw Error(Error::Code::kInvalid, std::string("dtrain: ") + op + ": " + which +
                                         " size differs from size() times the " + other +
                                         " size; expected " + std::to_string(want) +
                                         " elements, got " + std::to_string(got));
}

}  // namespace dtrain
