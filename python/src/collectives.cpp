// Each collective is two halves: operands() checks and holds the buffers under the GIL, then the
// blocking form runs the call without the GIL and the async form hands the held buffers to a
// PyWork, which keeps them until the collective is done.
#include "collectives.hpp"

#include <string>
#include <utility>
#include <vector>

#include "interrupt.hpp"

namespace dtrain::python {
namespace {

struct Operands {
  int device = -1;  // where the buffers must be: the Comm's device, -1 host memory
  std::vector<std::unique_ptr<Buffer>> held;
  const void* in = nullptr;
  void* out = nullptr;
  std::size_t count = 0;  // elements of the collective (per rank for allgather/reduce_scatter)
  DType type = DType::kUInt8;
  py::object result;
};

Buffer& hold(Operands& ops, py::handle obj, Access access, Typing typing, const std::string& what,
             std::optional<DType> dtype) {
  ops.held.push_back(std::make_unique<Buffer>(obj, access, typing, what, dtype, ops.device));
  return *ops.held.back();
}

[[noreturn]] void mismatch(const std::string& what, const std::string& problem) {
  throw py::value_error("dtrain: " + what + ": " + problem);
}

void same_type(const std::string& name, const Buffer& in, const Buffer& out) {
  if (in.dtype() != out.dtype()) {
    mismatch(name, "element types differ; expected out to be " + dtype_name(in.dtype()) +
                       " like in, got " + dtype_name(out.dtype()));
  }
}

// in == out (in place) when `out` is None.
Operands reduce_operands(const Comm& comm, const std::string& name, py::object buf, py::object out,
                         py::handle dtype) {
  Operands ops;
  ops.device = comm.device();
  const auto type = dtype_arg(dtype);
  if (out.is_none()) {
    Buffer& b = hold(ops, buf, Access::kWrite, Typing::kReduce, name + ": buf", type);
    ops.in = b.data();
    ops.out = b.data();
    ops.count = b.count();
    ops.type = b.dtype();
    ops.result = std::move(buf);
    return ops;
  }
  Buffer& in = hold(ops, buf, Access::kRead, Typing::kReduce, name + ": buf", type);
  Buffer& o = hold(ops, out, Access::kWrite, Typing::kReduce, name + ": out", type);
  same_type(name, in, o);
  if (in.count() != o.count()) {
    mismatch(name, "sizes differ; expected out to hold " + std::to_string(in.count()) +
                       " elements like buf, got " + std::to_string(o.count()));
  }
  ops.in = in.data();
  ops.out = o.data();
  ops.count = in.count();
  ops.type = in.dtype();
  ops.result = std::move(out);
  return ops;
}

Operands broadcast_operands(const Comm& comm, py::object buf, py::handle dtype) {
  Operands ops;
  ops.device = comm.device();
  Buffer& b = hold(ops, buf, Access::kWrite, Typing::kBytes, "broadcast: buf", dtype_arg(dtype));
  ops.out = b.data();
  ops.count = b.count();
  ops.type = b.dtype();
  ops.result = std::move(buf);
  return ops;
}

// `big` holds size() times the elements of `small` (allgather's out, reduce_scatter's in).
Operands scatter_gather_operands(Comm& comm, const std::string& name, py::object in, py::object out,
                                 Typing typing, py::handle dtype, bool gather) {
  Operands ops;
  ops.device = comm.device();
  const auto type = dtype_arg(dtype);
  Buffer& i = hold(ops, in, Access::kRead, typing, name + ": in", type);
  Buffer& o = hold(ops, out, Access::kWrite, typing, name + ": out", type);
  same_type(name, i, o);
  const Buffer& small = gather ? i : o;
  const Buffer& big = gather ? o : i;
  const auto world = static_cast<std::size_t>(comm.size());
  if (big.count() != small.count() * world) {
    mismatch(name, std::string(gather ? "out" : "in") + " size; expected " + std::to_string(world) +
                       " × " + std::to_string(small.count()) + " = " +
                       std::to_string(small.count() * world) + " elements, got " +
                       std::to_string(big.count()));
  }
  ops.in = i.data();
  ops.out = o.data();
  ops.count = small.count();
  ops.type = i.dtype();
  ops.result = std::move(out);
  return ops;
}

template <typename Call>
py::object run_blocking(Operands ops, Call call) {
  {
    py::gil_scoped_release release;
    try {
      call(ops);
    } catch (...) {
      keep_if_abandoned(ops.held);
      throw;
    }
  }
  return ops.result;
}

template <typename Call>
std::unique_ptr<PyWork> run_async(Operands ops, Call call) {
  Work work;
  {
    py::gil_scoped_release release;
    work = call(ops);
  }
  return std::make_unique<PyWork>(std::move(work), std::move(ops.held), std::move(ops.result));
}

}  // namespace

ReduceOp op_arg(py::handle value) {
  // A name is the common case: compared in place, without a std::string per call.
  if (PyUnicode_Check(value.ptr())) {
    for (const auto& [name, op] :
         {std::pair{"sum", ReduceOp::kSum}, std::pair{"avg", ReduceOp::kAvg},
          std::pair{"min", ReduceOp::kMin}, std::pair{"max", ReduceOp::kMax},
          std::pair{"product", ReduceOp::kProduct}}) {
      if (PyUnicode_CompareWithASCIIString(value.ptr(), name) == 0) return op;
    }
  } else if (py::isinstance<ReduceOp>(value)) {
    return value.cast<ReduceOp>();
  }
  const std::string name = py::str(value);
  throw py::value_error("dtrain: op; expected sum, avg, min, max or product, got \"" + name + "\"");
}

py::object allreduce(Comm& comm, py::object buf, py::handle op, py::object out, py::handle dtype) {
  const ReduceOp o = op_arg(op);
  return run_blocking(reduce_operands(comm, "allreduce", std::move(buf), std::move(out), dtype),
                      [&](Operands& a) { comm.allreduce(a.in, a.out, a.count, a.type, o); });
}

py::object broadcast(Comm& comm, py::object buf, int root, py::handle dtype) {
  return run_blocking(broadcast_operands(comm, std::move(buf), dtype),
                      [&](Operands& a) { comm.broadcast(a.out, a.count, a.type, root); });
}

py::object allgather(Comm& comm, py::object in, py::object out, py::handle dtype) {
  return run_blocking(scatter_gather_operands(comm, "allgather", std::move(in), std::move(out),
                                              Typing::kBytes, dtype, true),
                      [&](Operands& a) { comm.allgather(a.in, a.out, a.count, a.type); });
}

py::object reduce_scatter(Comm& comm, py::object in, py::object out, py::handle op,
                          py::handle dtype) {
  const ReduceOp o = op_arg(op);
  return run_blocking(scatter_gather_operands(comm, "reduce_scatter", std::move(in), std::move(out),
                                              Typing::kReduce, dtype, false),
                      [&](Operands& a) { comm.reduce_scatter(a.in, a.out, a.count, a.type, o); });
}

void barrier(Comm& comm) {
  py::gil_scoped_release release;
  comm.barrier();
}

std::unique_ptr<PyWork> allreduce_async(Comm& comm, py::object buf, py::handle op, py::object out,
                                        py::handle dtype) {
  const ReduceOp o = op_arg(op);
  return run_async(
      reduce_operands(comm, "allreduce_async", std::move(buf), std::move(out), dtype),
      [&](Operands& a) { return comm.allreduce_async(a.in, a.out, a.count, a.type, o); });
}

std::unique_ptr<PyWork> broadcast_async(Comm& comm, py::object buf, int root, py::handle dtype) {
  return run_async(broadcast_operands(comm, std::move(buf), dtype),
                   [&](Operands& a) { return comm.broadcast_async(a.out, a.count, a.type, root); });
}

std::unique_ptr<PyWork> allgather_async(Comm& comm, py::object in, py::object out,
                                        py::handle dtype) {
  return run_async(scatter_gather_operands(comm, "allgather_async", std::move(in), std::move(out),
                                           Typing::kBytes, dtype, true),
                   [&](Operands& a) { return comm.allgather_async(a.in, a.out, a.count, a.type); });
}

std::unique_ptr<PyWork> reduce_scatter_async(Comm& comm, py::object in, py::object out,
                                             py::handle op, py::handle dtype) {
  const ReduceOp o = op_arg(op);
  return run_async(
      scatter_gather_operands(comm, "reduce_scatter_async", std::move(in), std::move(out),
                              Typing::kReduce, dtype, false),
      [&](Operands& a) { return comm.reduce_scatter_async(a.in, a.out, a.count, a.type, o); });
}

}  // namespace dtrain::python
