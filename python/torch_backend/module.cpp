// dtrain._torch: the process group class that dtrain/torch.py registers with
// torch.distributed.Backend.register_backend("dtrain", ...). Built against the torch CMake found
// (DTRAIN_BUILD_TORCH), for the interpreter that torch belongs to.
#include <pybind11/chrono.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <chrono>
#include <optional>

#include "process_group.hpp"
#include "signal_check.hpp"

namespace py = pybind11;
using dtrain::torch_backend::ProcessGroupDtrain;

PYBIND11_MODULE(_torch, m) {
  m.doc() = "dtrain's torch.distributed backend (import dtrain.torch; docs/torch.md)";
  // torch.distributed's module registers c10d::ProcessGroup with pybind11; the class below
  // derives from it, so it must be registered first.
  py::module_::import("torch.distributed");
  py::class_<ProcessGroupDtrain, c10d::ProcessGroup, c10::intrusive_ptr<ProcessGroupDtrain>>(
      m, "ProcessGroupDtrain",
      "A torch.distributed process group over libdtrain's collectives (CPU tensors; CUDA "
      "tensors of all_reduce, broadcast and the *_tensor forms through its NCCL communicator).")
      .def(
          py::init([](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                      std::optional<std::chrono::milliseconds> timeout, const py::object& context) {
            auto check = dtrain::python::python_signal_check();  // made with the GIL
            // dtrain.Context is dtrain._dtrain's class: pybind11 finds it across the modules.
            auto shared =
                context.is_none() ? nullptr : context.cast<std::shared_ptr<dtrain::Context>>();
            // The rendezvous waits for the other ranks: let Python's other threads run.
            py::gil_scoped_release nogil;
            return c10::make_intrusive<ProcessGroupDtrain>(store, rank, size, timeout,
                                                           std::move(check), std::move(shared));
          }),
          py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout") = py::none(),
          py::arg("context") = py::none(),
          "The group on `context` (the process's dtrain.Context, whose rank and size must be "
          "`rank` and `size`; no `timeout` then), or, without one, on a Context bootstrapped "
          "through torch's `store` as rank `rank` of `size` (collective: every rank constructs "
          "it), whose deadline of the rendezvous and of every collective is `timeout` (a "
          "timedelta; None means DTRAIN_TIMEOUT, default 300 s).")
      .def_property_readonly(
          "context", [](const ProcessGroupDtrain& pg) { return pg.context(); },
          "The dtrain.Context the group runs on: the process's, which dtrain.init() returns too")
      .def_property_readonly(
          "backend", [](ProcessGroupDtrain& pg) { return std::string(pg.comm().backend()); },
          "libdtrain's backend: \"tcp\" (several ranks) or \"single\"")
      .def_property_readonly(
          "allreduce_transport",
          [](ProcessGroupDtrain& pg) { return std::string(pg.comm().allreduce_transport()); },
          "How allreduces travel: \"shared memory\", \"hierarchical\", \"tcp\", \"single\"")
      .def_property_readonly(
          "hostname", [](const ProcessGroupDtrain& pg) { return pg.world().hostname; },
          "This rank's host, as the others name it in errors")
      .def_property_readonly(
          "number", [](const ProcessGroupDtrain& pg) { return pg.number(); },
          "A new_group's number in libdtrain (torch's count of groups), with which its members "
          "made it without a message; None where they agreed on it, and for a default group");
  // For dtrain/torch.py's creator, not a public name: new_group while the default group is
  // dtrain's.
  m.def(
      "_subgroup",
      [](const c10::intrusive_ptr<ProcessGroupDtrain>& parent, const std::vector<int>& ranks,
         int rank, std::optional<std::chrono::milliseconds> timeout,
         std::optional<std::int64_t> number) {
        auto check = dtrain::python::python_signal_check();  // made with the GIL
        py::gil_scoped_release nogil;  // without a number the members agree on the group: a wait
        return c10::make_intrusive<ProcessGroupDtrain>(parent, ranks, rank, timeout, number,
                                                       std::move(check));
      },
      py::arg("parent"), py::arg("ranks"), py::arg("rank"), py::arg("timeout") = py::none(),
      py::arg("number") = py::none(),
      "The group of `parent`'s ranks `ranks` (in group order), this process being `rank` of it: "
      "libdtrain's Comm::subgroup, sharing the parent's connections (no rendezvous). Collective "
      "over the members only (torch's new_group). `timeout` (a timedelta): the deadline of its "
      "collectives and messages; None: the parent's. `number`: the group's number, the same on "
      "every member and given to no other group (torch's count of groups): made without a "
      "message; None: the members agree on the group.");
}
