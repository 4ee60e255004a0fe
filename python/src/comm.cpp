// The Context owns MPI and the bootstrap: Python holds it by a shared_ptr (the torch backend's
// process group may hold the same one: shared_context.hpp), and every object that uses it (Comm,
// Work, Meter, Checkpointer, Preemption, FusedAllreduce) keeps it alive, so MPI is finalized only
// after the last of them is gone, without the GIL.
#include "bindings.hpp"

#include "collectives.hpp"
#include "fused.hpp"
#include "gil.hpp"
#include "groups.hpp"
#include "interrupt.hpp"
#include "messages.hpp"
#include "rooted.hpp"
#include "shared_context.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace dtrain::python {
namespace {

Comm& context_comm(Context& ctx) { return ctx.comm(); }
Comm& comm_itself(Comm& comm) { return comm; }

void bind_enums(py::module_& m) {
  py::enum_<DType>(m, "DType")
      .value("FLOAT32", DType::kFloat32)
      .value("FLOAT64", DType::kFloat64)
      .value("INT32", DType::kInt32)
      .value("INT64", DType::kInt64)
      .value("UINT8", DType::kUInt8)
      .value("FLOAT16", DType::kFloat16)
      .value("BFLOAT16", DType::kBFloat16);
  py::enum_<ReduceOp>(m, "ReduceOp")
      .value("SUM", ReduceOp::kSum)
      .value("AVG", ReduceOp::kAvg)
      .value("MIN", ReduceOp::kMin)
      .value("MAX", ReduceOp::kMax)
      .value("PRODUCT", ReduceOp::kProduct);
}

void bind_context(py::module_& m) {
  py::class_<Context, SharedContext> ctx(
      m, "Context", "This process's place in the job and its communicator (dtrain.init()).");
  const auto world = [](auto member) {
    return [member](const Context& c) { return c.world().*member; };
  };
  ctx.def_property_readonly("rank", world(&WorldInfo::rank), "This rank, 0 .. size - 1.")
      .def_property_readonly("size", world(&WorldInfo::size), "The number of ranks in the job.")
      .def_property_readonly("local_rank", world(&WorldInfo::local_rank),
                             "This rank among the ranks on its node.")
      .def_property_readonly("local_size", world(&WorldInfo::local_size),
                             "The number of ranks on this node.")
      .def_property_readonly("node_id", world(&WorldInfo::node_id),
                             "The launcher's index of this node; -1 when it does not say.")
      .def_property_readonly("hostname", world(&WorldInfo::hostname),
                             "This rank's host, as the others name it in errors.")
      .def_property_readonly("bootstrap", world(&WorldInfo::bootstrap),
                             "How the rank was found: \"pmix\", \"mpi\", \"tcp\", "
                             "\"external\" or \"single\".")
      .def_property_readonly("affinity", world(&WorldInfo::affinity),
                             "Who applied the rank's GPUs, CPUs and NICs (\"launcher\", "
                             "\"init: ...\", \"off\", \"skipped: ...\").")
      .def_property_readonly("attempt", world(&WorldInfo::attempt),
                             "Which attempt of a restarting job this is, from 0 (DTRAIN_ATTEMPT).")
      .def_property_readonly("comm", &Context::comm, py::return_value_policy::reference_internal,
                             "The Context's communicator (the same collectives as the Context).")
      .def(
          "device_comm",
          [](Context& c) -> Comm& {
            Comm* comm = nullptr;
            {
              py::gil_scoped_release release;  // collective: waits for the other ranks
              comm = &c.device_comm();
            }
            install_interrupt_check(*comm);
            return *comm;
          },
          py::return_value_policy::reference_internal,
          "The NCCL communicator over CUDA device memory (Context::device_comm()), created by the "
          "first call, which is collective: every rank calls it at the same point. Its "
          "collectives are dtrain.Comm's and take buffers on its device (Comm.device: local_rank "
          "% the visible GPUs) through __dlpack__ or __cuda_array_interface__: torch, CuPy, "
          "JAX, Numba arrays. Streams: NCCL runs on the communicator's own stream and each "
          "call returns once it is done, results readable from any stream; it does not wait "
          "for the caller's streams, so finish writing the inputs first (e.g. "
          "torch.cuda.current_stream().synchronize()). Raises dtrain.InvalidError (a "
          "RuntimeError) naming what is missing: a build without NCCL, libnccl or libcudart "
          "not loadable, no visible GPU.")
      .def(
          "store_set",
          [](Context& c, const std::string& key, const py::bytes& value) {
            c.store_set(key, value);
          },
          "key"_a, "value"_a,
          "Publishes `value` under `key` in the bootstrap's store, for the other ranks.")
      .def(
          "store_get",
          [](Context& c, const std::string& key) {
            std::string value;
            {
              py::gil_scoped_release release;
              value = c.store_get(key);
            }
            return py::bytes(value);
          },
          "key"_a,
          "The value another rank published under `key`, waiting for it until DTRAIN_TIMEOUT "
          "(TimeoutError naming the key).")
      .def("abort", &Context::abort, "reason"_a,
           "Leaves the job after an error: tells the other ranks, whose collectives then fail "
           "naming this rank, and frees nothing collectively at exit (Context::abort).")
      .def("__repr__", [](const Context& c) {
        const WorldInfo& w = c.world();
        return "<dtrain.Context rank " + std::to_string(w.rank) + " of " + std::to_string(w.size) +
               " on " + w.hostname + ", bootstrap " + w.bootstrap + ">";
      });
  def_collectives(ctx, &context_comm);
  def_messages(ctx, &context_comm);
  def_rooted(ctx, &context_comm);
  def_groups(ctx, &context_comm);
}

// The process's one Context (shared_context.hpp): made, found and noted.
void bind_live_context(py::module_& m) {
  m.def(
      "_init",
      [] {
        SharedContext c;
        bool made = false;
        {
          py::gil_scoped_release release;
          c = live_or_make([&made] {
            made = true;
            return share(dtrain::init());
          });
        }
        if (made) install_interrupt_check(c->comm());
        return c;
      },
      "The process's live Context (shared_context.hpp), else one made by bootstrapping this "
      "process (dtrain::init()).");
  m.def(
      "_live_context", [] { return live_context(); },
      "The process's live Context, or None: whatever holds it (Python, a process group).");
  m.def("_note_context", &note_live, "context"_a,
        "Notes `context`, which a torch process group made, as the process's live Context.");
}

void bind_work(py::module_& m) {
  py::class_<PyWork>(m, "Work", "An async collective: wait() returns its output buffer.")
      .def("wait", &PyWork::wait,
           "Blocks until the collective is done and returns its output buffer, or raises its "
           "error (TimeoutError after DTRAIN_TIMEOUT; KeyboardInterrupt on Ctrl-C).")
      .def("test", &PyWork::test,
           "Whether the collective is done, without blocking; raises its error if it failed.")
      .def_property_readonly("done", &PyWork::done,
                             "Whether wait() or test() has seen the collective done.")
      .def_property_readonly("sequence", &PyWork::sequence,
                             "The collective's number on its communicator (0, 1, ...).")
      .def_property_readonly("source", &PyWork::source,
                             "The sender's rank of a completed irecv; -1 otherwise.");
}

void bind_fusion(py::module_& m) {
  py::class_<PyFused>(m, "FusedAllreduce",
                      "Arrays registered once and reduced together in place by run().")
      .def(py::init([](Context& ctx, const py::list& tensors, py::handle op,
                       std::size_t bucket_bytes, py::handle dtype) {
             return std::make_unique<PyFused>(ctx.comm(), tensors, op_arg(op), bucket_bytes,
                                              dtype_arg(dtype));
           }),
           "ctx"_a, "tensors"_a, "op"_a = "sum", "bucket_bytes"_a = 0, py::kw_only(),
           "dtype"_a = py::none(), py::keep_alive<1, 2>(),
           "Registers the buffers `tensors` (one element type, `dtype` if given) to be reduced "
           "with `op` by each run(), in buckets of `bucket_bytes` (0: DTRAIN_FUSION_BYTES, "
           "else 64 MiB).")
      .def("run", &PyFused::run,
           "Collective: reduces every registered buffer in place, as one fused allreduce.")
      .def("__len__", &PyFused::size)
      .def_property_readonly("bucket_count", &PyFused::bucket_count,
                             "How many buckets run() reduces.")
      .def_property_readonly("bucket_bytes", &PyFused::bucket_bytes, "The bucket size in bytes.")
      .def_property_readonly("dtype", &PyFused::dtype, "The buffers' element type.");
}

}  // namespace

void bind_comm(py::module_& m) {
  bind_enums(m);
  // Work before the collectives that return it, Context before FusedAllreduce that takes it: so
  // that help() names them dtrain._dtrain.Work, not their C++ types.
  bind_work(m);
  py::class_<Comm> comm(m, "Comm",
                        "A communicator of the Context: ctx.comm (host memory: MPI, TCP or "
                        "single) or ctx.device_comm() (CUDA device memory: NCCL).");
  comm.def_property_readonly("rank", &Comm::rank, "This rank, 0 .. size - 1.")
      .def_property_readonly("size", &Comm::size, "The number of ranks.");
  def_collectives(comm, &comm_itself);
  def_messages(comm, &comm_itself);
  def_rooted(comm, &comm_itself);
  def_groups(comm, &comm_itself);
  bind_context(m);
  bind_live_context(m);
  bind_fusion(m);
  // For tests: a buffer's checks without a collective, so that the refusals of device buffers can
  // be seen on machines without a GPU (a fake __cuda_array_interface__ reaches every check but the
  // pointer's device).
  m.def(
      "_buffer_info",
      [](py::handle obj, int device, bool write, py::handle dtype) {
        const Buffer b(obj, write ? Access::kWrite : Access::kRead, Typing::kReduce, "buf",
                       dtype_arg(dtype), device);
        return py::make_tuple(b.count(), dtype_name(b.dtype()));
      },
      "obj"_a, "device"_a = -1, "write"_a = true, "dtype"_a = py::none(),
      "(count, dtype) of `obj` as a collective on `device` (-1: host) would take it.");
}

}  // namespace dtrain::python
