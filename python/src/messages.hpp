// Point-to-point messages of dtrain::Comm on Python buffers (send, recv, isend, irecv): checked
// and held under the GIL, run without it, as the collectives are (collectives.hpp). Defined once
// and bound twice, on Comm and on Context.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "dtrain/dtrain.hpp"
#include "work.hpp"

namespace dtrain::python {

namespace py = pybind11;

void send(Comm& comm, py::object buf, int dst, int tag, py::handle dtype);
// Returns the sender's rank; `src` None: any rank.
int recv(Comm& comm, py::object buf, py::handle src, int tag, py::handle dtype);
std::unique_ptr<PyWork> isend(Comm& comm, py::object buf, int dst, int tag, py::handle dtype);
std::unique_ptr<PyWork> irecv(Comm& comm, py::object buf, py::handle src, int tag,
                              py::handle dtype);

// Adds the calls above to `cls`; `get` gives a Self's Comm.
template <typename Class, typename Get>
void def_messages(Class& cls, Get get) {
  using Self = typename Class::type;
  using namespace pybind11::literals;
  const auto alive = py::keep_alive<0, 1>();  // a Work keeps its Context alive
  cls.def(
      "send",
      [get](Self& s, py::object buf, int dst, int tag, py::handle dtype) {
        send(get(s), std::move(buf), dst, tag, dtype);
      },
      "buf"_a, "dst"_a, "tag"_a = 0, py::kw_only(), "dtype"_a = py::none(),
      "Sends `buf` to rank `dst` with `tag` (>= 0); returns once its bytes are on their way.");
  cls.def(
      "recv",
      [get](Self& s, py::object buf, py::handle src, int tag, py::handle dtype) {
        return recv(get(s), std::move(buf), src, tag, dtype);
      },
      "buf"_a, "src"_a = py::none(), "tag"_a = 0, py::kw_only(), "dtype"_a = py::none(),
      "Receives a message with `tag` from rank `src` (None: any rank) into `buf`, which must be "
      "its size; returns the sender's rank.");
  cls.def(
      "isend",
      [get](Self& s, py::object buf, int dst, int tag, py::handle dtype) {
        return isend(get(s), std::move(buf), dst, tag, dtype);
      },
      "buf"_a, "dst"_a, "tag"_a = 0, py::kw_only(), "dtype"_a = py::none(), alive,
      "send, started: returns a Work; `buf` is held until it is done.");
  cls.def(
      "irecv",
      [get](Self& s, py::object buf, py::handle src, int tag, py::handle dtype) {
        return irecv(get(s), std::move(buf), src, tag, dtype);
      },
      "buf"_a, "src"_a = py::none(), "tag"_a = 0, py::kw_only(), "dtype"_a = py::none(), alive,
      "recv, started: returns a Work whose wait() returns `buf` and whose source is the "
      "sender's rank once done.");
}

}  // namespace dtrain::python
