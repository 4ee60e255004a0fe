// gather, scatter, reduce, alltoall and alltoallv of dtrain::Comm on Python buffers: checked and
// held under the GIL, run without it, as the other collectives (collectives.hpp). Element counts
// are of the buffers' own type; gather's output and scatter's input are the root's only (None
// elsewhere). Defined once and bound twice, on Comm and on Context.
#pragma once

#include <pybind11/pybind11.h>

#include "dtrain/dtrain.hpp"

namespace dtrain::python {

namespace py = pybind11;

// Each returns the buffer holding its result on this rank (gather and reduce: None off the root).
py::object gather(Comm& comm, py::object in, py::object out, int root, py::handle dtype);
py::object scatter(Comm& comm, py::object in, py::object out, int root, py::handle dtype);
py::object reduce(Comm& comm, py::object buf, py::handle op, int root, py::object out,
                  py::handle dtype);
py::object alltoall(Comm& comm, py::object in, py::object out, py::handle dtype);
py::object alltoallv(Comm& comm, py::object in, py::handle send_counts, py::object out,
                     py::handle recv_counts, py::handle send_offsets, py::handle recv_offsets,
                     py::handle dtype);

// Adds the calls above to `cls`; `get` gives a Self's Comm.
template <typename Class, typename Get>
void def_rooted(Class& cls, Get get) {
  using Self = typename Class::type;
  using namespace pybind11::literals;
  cls.def(
      "gather",
      [get](Self& s, py::object in, py::object out, int root, py::handle dtype) {
        return gather(get(s), std::move(in), std::move(out), root, dtype);
      },
      "in_"_a, "out"_a = py::none(), "root"_a = 0, py::kw_only(), "dtype"_a = py::none(),
      "The root's `out` (size * len(in) elements; None elsewhere) receives rank r's `in` at "
      "r * len(in); only the root receives. Returns `out` at the root, None elsewhere.");
  cls.def(
      "scatter",
      [get](Self& s, py::object in, py::object out, int root, py::handle dtype) {
        return scatter(get(s), std::move(in), std::move(out), root, dtype);
      },
      "in_"_a, "out"_a, "root"_a = 0, py::kw_only(), "dtype"_a = py::none(),
      "Rank r's `out` receives block r of the root's `in` (size * len(out) elements; None "
      "elsewhere). Returns `out`.");
  cls.def(
      "reduce",
      [get](Self& s, py::object buf, py::handle op, int root, py::object out, py::handle dtype) {
        return reduce(get(s), std::move(buf), op, root, std::move(out), dtype);
      },
      "buf"_a, "op"_a = "sum", "root"_a = 0, py::kw_only(), "out"_a = py::none(),
      "dtype"_a = py::none(),
      "The root receives every rank's `buf` combined, in place or into `out`; the others' "
      "buffers are not written. Returns the result's buffer at the root, None elsewhere.");
  cls.def(
      "alltoall",
      [get](Self& s, py::object in, py::object out, py::handle dtype) {
        return alltoall(get(s), std::move(in), std::move(out), dtype);
      },
      "in_"_a, "out"_a, py::kw_only(), "dtype"_a = py::none(),
      "Block r of `in` (size equal blocks) goes to rank r; block s of `out` comes from rank s. "
      "Returns `out`.");
  cls.def(
      "alltoallv",
      [get](Self& s, py::object in, py::handle send_counts, py::object out, py::handle recv_counts,
            py::handle send_offsets, py::handle recv_offsets, py::handle dtype) {
        return alltoallv(get(s), std::move(in), send_counts, std::move(out), recv_counts,
                         send_offsets, recv_offsets, dtype);
      },
      "in_"_a, "send_counts"_a, "out"_a, "recv_counts"_a, py::kw_only(),
      "send_offsets"_a = py::none(), "recv_offsets"_a = py::none(), "dtype"_a = py::none(),
      "send_counts[r] elements of `in` go to rank r, which expects them in its recv_counts; "
      "offsets (elements) default to the counts laid end to end. Returns `out`.");
}

}  // namespace dtrain::python
