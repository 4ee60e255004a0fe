// The collectives of dtrain::Comm on Python buffers: each checks its arguments under the GIL,
// then runs with the GIL released, so other Python threads go on while it waits for the peers.
// Defined once and bound twice, on Comm and on Context (ctx.allreduce is ctx.comm.allreduce).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include "dtrain/dtrain.hpp"

#include "work.hpp"

namespace dtrain::python {

namespace py = pybind11;

// "sum", "avg", "min", "max", "product" or a ReduceOp.
ReduceOp op_arg(py::handle value);

// Each returns the buffer that holds the result (`out`, or `buf` in place).
py::object allreduce(Comm& comm, py::object buf, py::handle op, py::object out, py::handle dtype);
py::object broadcast(Comm& comm, py::object buf, int root, py::handle dtype);
py::object allgather(Comm& comm, py::object in, py::object out, py::handle dtype);
py::object reduce_scatter(Comm& comm, py::object in, py::object out, py::handle op,
                          py::handle dtype);
void barrier(Comm& comm);

std::unique_ptr<PyWork> allreduce_async(Comm& comm, py::object buf, py::handle op, py::object out,
                                        py::handle dtype);
std::unique_ptr<PyWork> broadcast_async(Comm& comm, py::object buf, int root, py::handle dtype);
std::unique_ptr<PyWork> allgather_async(Comm& comm, py::object in, py::object out,
                                        py::handle dtype);
std::unique_ptr<PyWork> reduce_scatter_async(Comm& comm, py::object in, py::object out,
                                             py::handle op, py::handle dtype);

// Adds the collectives above and the Comm's properties to `cls`; `get` gives a Self's Comm.
template <typename Class, typename Get>
void def_collectives(Class& cls, Get get) {
  using Self = typename Class::type;
  using namespace pybind11::literals;
  const auto alive = py::keep_alive<0, 1>();  // a Work keeps its Context alive
  cls.def(
      "allreduce",
      [get](Self& s, py::object buf, py::handle op, py::object out, py::handle dtype) {
        return allreduce(get(s), std::move(buf), op, std::move(out), dtype);
      },
      "buf"_a, "op"_a = "sum", py::kw_only(), "out"_a = py::none(), "dtype"_a = py::none(),
      "Reduces `buf` across ranks, in place, or into `out`; returns the result's buffer.");
  cls.def(
      "broadcast",
      [get](Self& s, py::object buf, int root, py::handle dtype) {
        return broadcast(get(s), std::move(buf), root, dtype);
      },
      "buf"_a, "root"_a = 0, py::kw_only(), "dtype"_a = py::none(),
      "Copies root's `buf` into every rank's `buf`; returns `buf`.");
  cls.def(
      "allgather",
      [get](Self& s, py::object in, py::object out, py::handle dtype) {
        return allgather(get(s), std::move(in), std::move(out), dtype);
      },
      "in_"_a, "out"_a, py::kw_only(), "dtype"_a = py::none(),
      "`out` (size * len(in) elements) receives rank r's `in` at r * len(in); returns `out`.");
  cls.def(
      "reduce_scatter",
      [get](Self& s, py::object in, py::object out, py::handle op, py::handle dtype) {
        return reduce_scatter(get(s), std::move(in), std::move(out), op, dtype);
      },
      "in_"_a, "out"_a, "op"_a = "sum", py::kw_only(), "dtype"_a = py::none(),
      "`out` receives block rank() of the reduction of every rank's `in`; returns `out`.");
  cls.def(
      "barrier", [get](Self& s) { barrier(get(s)); }, "Returns once every rank has called it.");
  cls.def(
      "allreduce_async",
      [get](Self& s, py::object buf, py::handle op, py::object out, py::handle dtype) {
        return allreduce_async(get(s), std::move(buf), op, std::move(out), dtype);
      },
      "buf"_a, "op"_a = "sum", py::kw_only(), "out"_a = py::none(), "dtype"_a = py::none(), alive,
      "allreduce, started and not waited for: returns a Work whose wait() returns the result's "
      "buffer. `op`: \"sum\", \"avg\", \"min\", \"max\", \"product\" or a ReduceOp; `dtype` "
      "overrides the buffer's element type. The buffers are held until the Work is done.");
  cls.def(
      "broadcast_async",
      [get](Self& s, py::object buf, int root, py::handle dtype) {
        return broadcast_async(get(s), std::move(buf), root, dtype);
      },
      "buf"_a, "root"_a = 0, py::kw_only(), "dtype"_a = py::none(), alive,
      "broadcast, started and not waited for: returns a Work; `buf` is root's once it is done.");
  cls.def(
      "allgather_async",
      [get](Self& s, py::object in, py::object out, py::handle dtype) {
        return allgather_async(get(s), std::move(in), std::move(out), dtype);
      },
      "in_"_a, "out"_a, py::kw_only(), "dtype"_a = py::none(), alive,
      "allgather, started and not waited for: returns a Work whose wait() returns `out`.");
  cls.def(
      "reduce_scatter_async",
      [get](Self& s, py::object in, py::object out, py::handle op, py::handle dtype) {
        return reduce_scatter_async(get(s), std::move(in), std::move(out), op, dtype);
      },
      "in_"_a, "out"_a, "op"_a = "sum", py::kw_only(), "dtype"_a = py::none(), alive,
      "reduce_scatter, started and not waited for: returns a Work whose wait() returns `out`.");
  cls.def_property_readonly(
      "backend", [get](Self& s) { return std::string(get(s).backend()); },
      "The communicator: \"mpi\", \"tcp\" or \"single\" (host memory), \"nccl\" "
      "(ctx.device_comm()).");
  cls.def_property_readonly(
      "device", [get](Self& s) { return get(s).device(); },
      "The CUDA device whose memory the collectives take (ctx.device_comm(): local_rank % the "
      "visible devices), or -1: host memory (ctx.comm()).");
  cls.def_property_readonly(
      "allreduce_transport", [get](Self& s) { return std::string(get(s).allreduce_transport()); },
      "How allreduces travel: \"shared memory\", \"hierarchical\", \"tcp\", \"mpi\", "
      "\"single\".");
  cls.def_property_readonly(
      "next_sequence", [get](Self& s) { return get(s).next_sequence(); },
      "The number the next collective gets (0, 1, ...), as errors name it.");
}

}  // namespace dtrain::python
