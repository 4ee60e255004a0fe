#include "groups.hpp"

#include <span>

#include "interrupt.hpp"

namespace dtrain::python {
namespace {

std::optional<Comm> ready(std::optional<Comm> group) {
  if (group) install_interrupt_check(*group);  // Ctrl-C in its waits, as in the parent's
  return group;
}

}  // namespace

std::optional<Comm> split(Comm& comm, int color, int key) {
  std::optional<Comm> group;
  {
    py::gil_scoped_release release;  // an allgather over `comm`
    group = comm.split(color, key);
  }
  return ready(std::move(group));
}

std::optional<Comm> subgroup(Comm& comm, const std::vector<int>& ranks,
                             std::optional<std::chrono::milliseconds> timeout,
                             std::optional<std::int64_t> number) {
  std::optional<Comm> group;
  {
    py::gil_scoped_release release;  // without a number, the members agree on the group
    group = comm.subgroup(std::span<const int>(ranks), timeout, number);
  }
  return ready(std::move(group));
}

}  // namespace dtrain::python
