#include "messages.hpp"

#include <string>
#include <utility>
#include <vector>

#include "buffers.hpp"
#include "interrupt.hpp"

namespace dtrain::python {
namespace {

// The buffer of a message, held: any element type travels as bytes.
struct Message {
  std::vector<std::unique_ptr<Buffer>> held;
  void* data = nullptr;
  std::size_t count = 0;
  DType type = DType::kUInt8;
  py::object buf;
};

Message hold(const Comm& comm, py::object buf, Access access, const char* name, py::handle dtype) {
  Message m;
  m.held.push_back(std::make_unique<Buffer>(
      buf, access, Typing::kBytes, std::string(name) + ": buf", dtype_arg(dtype), comm.device()));
  m.data = m.held.back()->data();
  m.count = m.held.back()->count();
  m.type = m.held.back()->dtype();
  m.buf = std::move(buf);
  return m;
}

int source_arg(py::handle src) {
  if (src.is_none()) return Comm::kAnySource;
  if (!py::isinstance<py::int_>(src) || py::isinstance<py::bool_>(src)) {
    throw py::type_error("dtrain: recv: src; expected a rank (int) or None (any rank), got " +
                         std::string(py::str(py::type::of(src).attr("__name__"))));
  }
  const int rank = src.cast<int>();
  // -1 would read as any source; the caller meant a rank.
  if (rank < 0) {
    throw py::value_error("dtrain: recv: src; expected a rank (0 or more) or None, got " +
                          std::to_string(rank));
  }
  return rank;
}

}  // namespace

void send(Comm& comm, py::object buf, int dst, int tag, py::handle dtype) {
  Message m = hold(comm, std::move(buf), Access::kRead, "send", dtype);
  py::gil_scoped_release release;
  try {
    comm.send(m.data, m.count, m.type, dst, tag);
  } catch (...) {
    keep_if_abandoned(m.held);
    throw;
  }
}

int recv(Comm& comm, py::object buf, py::handle src, int tag, py::handle dtype) {
  const int from = source_arg(src);
  Message m = hold(comm, std::move(buf), Access::kWrite, "recv", dtype);
  py::gil_scoped_release release;
  try {
    return comm.recv(m.data, m.count, m.type, from, tag);
  } catch (...) {
    keep_if_abandoned(m.held);
    throw;
  }
}

std::unique_ptr<PyWork> isend(Comm& comm, py::object buf, int dst, int tag, py::handle dtype) {
  Message m = hold(comm, std::move(buf), Access::kRead, "isend", dtype);
  Work work;
  {
    py::gil_scoped_release release;
    work = comm.isend(m.data, m.count, m.type, dst, tag);
  }
  return std::make_unique<PyWork>(std::move(work), std::move(m.held), std::move(m.buf));
}

std::unique_ptr<PyWork> irecv(Comm& comm, py::object buf, py::handle src, int tag,
                              py::handle dtype) {
  const int from = source_arg(src);
  Message m = hold(comm, std::move(buf), Access::kWrite, "irecv", dtype);
  Work work;
  {
    py::gil_scoped_release release;
    work = comm.irecv(m.data, m.count, m.type, from, tag);
  }
  return std::make_unique<PyWork>(std::move(work), std::move(m.held), std::move(m.buf));
}

}  // namespace dtrain::python
