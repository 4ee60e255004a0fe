// Sub-communicators of dtrain::Comm for Python (Comm.split, Comm.subgroup; on Context too, whose
// communicator they divide): a new dtrain.Comm sharing the parent's connections, which keeps its
// Context alive. Defined once and bound twice, on Comm and on Context.
#pragma once

#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace dtrain::python {

namespace py = pybind11;

// Collective (split: over `comm`; subgroup: over its members), waited for without the GIL. None
// for a rank the group leaves out.
std::optional<Comm> split(Comm& comm, int color, int key);
std::optional<Comm> subgroup(Comm& comm, const std::vector<int>& ranks,
                             std::optional<std::chrono::milliseconds> timeout,
                             std::optional<std::int64_t> number);

// Adds split and subgroup to `cls`; `get` gives a Self's Comm.
template <typename Class, typename Get>
void def_groups(Class& cls, Get get) {
  using Self = typename Class::type;
  using namespace pybind11::literals;
  cls.def(
      "split", [get](Self& s, int color, int key) { return split(get(s), color, key); }, "color"_a,
      "key"_a = 0, py::keep_alive<0, 1>(),
      "MPI_Comm_split, collective over this communicator: the ranks passing one `color` (>= 0) "
      "form a group, ordered by `key` then by their rank here; color -1: this rank joins none "
      "(None). The group is a dtrain.Comm sharing this one's connections (no rendezvous): every "
      "collective and message works on it, in its own numbering.");
  cls.def(
      "subgroup",
      [get](Self& s, const std::vector<int>& ranks,
            std::optional<std::chrono::milliseconds> timeout, std::optional<std::int64_t> number) {
        return subgroup(get(s), ranks, timeout, number);
      },
      "ranks"_a, py::kw_only(), "timeout"_a = py::none(), "number"_a = py::none(),
      py::keep_alive<0, 1>(),
      "The group of `ranks` (this communicator's numbering, each once), which become its ranks 0, "
      "1, ... in that order; None for a rank not in it. Collective over the members only. "
      "`timeout` (a timedelta): the deadline of its collectives and messages (None: this "
      "communicator's). `number` (0 to 2**30 - 2): a name for the group that every member gives "
      "and no other group of the Context has: then it is made without a message; None: the "
      "members agree on it.");
}

}  // namespace dtrain::python
