#include "rooted.hpp"

#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "buffers.hpp"
#include "collectives.hpp"
#include "interrupt.hpp"

namespace dtrain::python {
namespace {

using Held = std::vector<std::unique_ptr<Buffer>>;

Buffer& hold(Held& held, const Comm& comm, py::handle obj, Access access, Typing typing,
             const std::string& what, py::handle dtype) {
  held.push_back(
      std::make_unique<Buffer>(obj, access, typing, what, dtype_arg(dtype), comm.device()));
  return *held.back();
}

template <typename Call>
void released(Held& held, Call call) {
  py::gil_scoped_release release;
  try {
    call();
  } catch (...) {
    keep_if_abandoned(held);
    throw;
  }
}

[[noreturn]] void refuse(const std::string& what) { throw py::value_error("dtrain: " + what); }

// A list of `size` non-negative whole numbers (counts or offsets, in elements).
std::vector<std::size_t> per_rank(py::handle value, int size, const char* name) {
  std::vector<std::size_t> v;
  try {
    for (py::handle item : value) {
      const long long n = item.cast<long long>();
      if (n < 0)
        refuse(std::string("alltoallv: ") + name + ": " + std::to_string(n) +
               "; expected counts of 0 or more");
      v.push_back(static_cast<std::size_t>(n));
    }
  } catch (const py::cast_error&) {
    refuse(std::string("alltoallv: ") + name + "; expected whole numbers");
  }
  if (v.size() != static_cast<std::size_t>(size)) {
    refuse(std::string("alltoallv: ") + name + ": " + std::to_string(v.size()) +
           " entries; expected one per rank (" + std::to_string(size) + ")");
  }
  return v;
}

std::vector<std::size_t> end_to_end(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> offsets(counts.size());
  std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), std::size_t{0});
  return offsets;
}

}  // namespace

py::object gather(Comm& comm, py::object in, py::object out, int root, py::handle dtype) {
  Held held;
  const Buffer& i = hold(held, comm, in, Access::kRead, Typing::kBytes, "gather: in_", dtype);
  const bool here = comm.rank() == root;
  void* o = nullptr;
  if (here) {
    if (out.is_none()) refuse("gather: out; expected a buffer at the root, got None");
    const Buffer& b = hold(held, comm, out, Access::kWrite, Typing::kBytes, "gather: out", dtype);
    if (b.bytes() != i.bytes() * static_cast<std::size_t>(comm.size())) {
      refuse("gather: out: " + std::to_string(b.bytes()) + " bytes; expected " +
             std::to_string(comm.size()) + " × " + std::to_string(i.bytes()));
    }
    o = b.data();
  }
  released(held, [&] { comm.gather(i.data(), o, i.bytes(), DType::kUInt8, root); });
  return here ? out : py::none();
}

py::object scatter(Comm& comm, py::object in, py::object out, int root, py::handle dtype) {
  Held held;
  const Buffer& o = hold(held, comm, out, Access::kWrite, Typing::kBytes, "scatter: out", dtype);
  const void* i = nullptr;
  if (comm.rank() == root) {
    if (in.is_none()) refuse("scatter: in_; expected a buffer at the root, got None");
    const Buffer& b = hold(held, comm, in, Access::kRead, Typing::kBytes, "scatter: in_", dtype);
    if (b.bytes() != o.bytes() * static_cast<std::size_t>(comm.size())) {
      refuse("scatter: in_: " + std::to_string(b.bytes()) + " bytes; expected " +
             std::to_string(comm.size()) + " × " + std::to_string(o.bytes()));
    }
    i = b.data();
  }
  released(held, [&] { comm.scatter(i, o.data(), o.bytes(), DType::kUInt8, root); });
  return out;
}

py::object reduce(Comm& comm, py::object buf, py::handle op, int root, py::object out,
                  py::handle dtype) {
  const ReduceOp o = op_arg(op);
  Held held;
  const bool here = comm.rank() == root;
  const Buffer& b = hold(held, comm, buf, here && out.is_none() ? Access::kWrite : Access::kRead,
                         Typing::kReduce, "reduce: buf", dtype);
  void* result = here ? b.data() : nullptr;
  if (here && !out.is_none()) {
    const Buffer& r = hold(held, comm, out, Access::kWrite, Typing::kReduce, "reduce: out", dtype);
    if (r.dtype() != b.dtype() || r.count() != b.count()) {
      refuse("reduce: out: " + std::to_string(r.count()) + " " + dtype_name(r.dtype()) +
             "; expected " + std::to_string(b.count()) + " " + dtype_name(b.dtype()) + " like buf");
    }
    result = r.data();
  }
  released(held, [&] { comm.reduce(b.data(), result, b.count(), b.dtype(), o, root); });
  if (!here) return py::none();
  return out.is_none() ? buf : out;
}

py::object alltoall(Comm& comm, py::object in, py::object out, py::handle dtype) {
  Held held;
  const Buffer& i = hold(held, comm, in, Access::kRead, Typing::kBytes, "alltoall: in_", dtype);
  const Buffer& o = hold(held, comm, out, Access::kWrite, Typing::kBytes, "alltoall: out", dtype);
  const auto n = static_cast<std::size_t>(comm.size());
  if (i.bytes() != o.bytes() || i.bytes() % n != 0) {
    refuse("alltoall: " + std::to_string(i.bytes()) + " bytes in, " + std::to_string(o.bytes()) +
           " out; expected equal sizes, a multiple of the " + std::to_string(n) + " ranks");
  }
  released(held, [&] { comm.alltoall(i.data(), o.data(), i.bytes() / n, DType::kUInt8); });
  return out;
}

py::object alltoallv(Comm& comm, py::object in, py::handle send_counts, py::object out,
                     py::handle recv_counts, py::handle send_offsets, py::handle recv_offsets,
                     py::handle dtype) {
  Held held;
  const Buffer& i = hold(held, comm, in, Access::kRead, Typing::kBytes, "alltoallv: in_", dtype);
  const Buffer& o = hold(held, comm, out, Access::kWrite, Typing::kBytes, "alltoallv: out", dtype);
  if (i.dtype() != o.dtype()) {
    refuse("alltoallv: element types differ; expected out to be " + dtype_name(i.dtype()) +
           " like in_, got " + dtype_name(o.dtype()));
  }
  const int n = comm.size();
  const auto sc = per_rank(send_counts, n, "send_counts");
  const auto rc = per_rank(recv_counts, n, "recv_counts");
  const auto so =
      send_offsets.is_none() ? end_to_end(sc) : per_rank(send_offsets, n, "send_offsets");
  const auto ro =
      recv_offsets.is_none() ? end_to_end(rc) : per_rank(recv_offsets, n, "recv_offsets");
  for (int r = 0; r < n; ++r) {
    const auto k = static_cast<std::size_t>(r);
    if (so[k] + sc[k] > i.count() || ro[k] + rc[k] > o.count()) {
      refuse("alltoallv: the block of rank " + std::to_string(r) +
             " lies past the end of its buffer; expected offsets + counts within in_ (" +
             std::to_string(i.count()) + " elements) and out (" + std::to_string(o.count()) + ")");
    }
  }
  released(held, [&] { comm.alltoallv(i.data(), sc, so, o.data(), rc, ro, i.dtype()); });
  return out;
}

}  // namespace dtrain::python
