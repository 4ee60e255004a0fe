// dtrain::Comm, the public handle: argument checks shared by every backend, then a call of the
// backend through the Engine. Also the small DType/ReduceOp helpers.
#include <functional>
#include <string>
#include <string_view>

#include "comm/algorithms/reduce.hpp"
#include "comm/call_arguments.hpp"
#include "comm/communicator.hpp"
#include "comm/engine.hpp"
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
      return "sum";
    case ReduceOp::kAvg:
      return "avg";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kProduct:
      return "product";
  }
  return "unknown";
}

namespace {

using runtime::check_overlap;
using runtime::check_reduce;
using runtime::require_buffer;
using runtime::same_or_disjoint;

void check_allreduce(const void* in, const void* out, std::size_t count, DType type, ReduceOp op) {
  const std::size_t bytes = count * dtype_size(type);
  check_reduce(type, op, "allreduce");
  require_buffer(in, count, "allreduce", "input");
  require_buffer(out, count, "allreduce", "output");
  check_overlap(in, out, bytes, bytes, out, "allreduce", same_or_disjoint);
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
  runtime::check_root(root, size(), "broadcast");
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
