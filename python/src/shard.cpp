// dtrain::Shard as dtrain._Shard; the Python subclass dtrain.Shard adds the torch Sampler
// protocol (set_epoch, len, iteration). Indices come from libdtrain, so a Python rank reads
// exactly the samples a C++ rank with the same arguments would.
#include "dtrain/shard.hpp"
#include "bindings.hpp"
#include "numbers.hpp"

#include <pybind11/stl.h>

#include <climits>

namespace py = pybind11;
using namespace pybind11::literals;

namespace dtrain::python {
namespace {

// Counts from 0 to 2^64 - 1, or dtrain.InvalidError naming the argument (numbers.hpp).
std::uint64_t count_arg(py::handle value, const char* what) {
  if (const auto n = uint64_of(value)) return *n;
  throw Error(Error::Code::kInvalid, std::string("dtrain: shard: ") + what +
                                         "; expected an integer from 0 to 18446744073709551615, "
                                         "got " +
                                         std::string(py::repr(value)));
}

// rank and world: the Shard's own checks name their ranges.
int rank_arg(py::handle value, const char* what) {
  if (const auto n = int_in(value, INT_MIN, INT_MAX)) return static_cast<int>(*n);
  throw Error(Error::Code::kInvalid, std::string("dtrain: shard: ") + what +
                                         "; expected an integer of C's int range, got " +
                                         std::string(py::repr(value)));
}

ShardTail tail_arg(py::handle value) {
  if (py::isinstance<ShardTail>(value)) return value.cast<ShardTail>();
  const std::string name = py::str(value);
  if (name == "pad") return ShardTail::kPad;
  if (name == "drop") return ShardTail::kDrop;
  if (name == "exact_once") return ShardTail::kExactOnce;
  throw py::value_error("dtrain: shard: tail; expected pad, drop or exact_once, got \"" + name +
                        "\"");
}

}  // namespace

void bind_shard(py::module_& m) {
  py::enum_<ShardTail>(m, "ShardTail")
      .value("PAD", ShardTail::kPad)
      .value("DROP", ShardTail::kDrop)
      .value("EXACT_ONCE", ShardTail::kExactOnce);

  py::class_<Shard>(m, "_Shard")
      .def(py::init([](py::handle num_samples, py::handle rank, py::handle world, bool shuffle,
                       py::handle seed, py::handle tail) {
             return std::make_unique<Shard>(
                 count_arg(num_samples, "num_samples"), rank_arg(rank, "rank"),
                 rank_arg(world, "world size"),
                 ShardOptions{shuffle, count_arg(seed, "seed"), tail_arg(tail)});
           }),
           "num_samples"_a, "rank"_a, "world"_a, "shuffle"_a = true, "seed"_a = 0, "tail"_a = "pad")
      .def_property_readonly("num_samples", &Shard::num_samples, "Samples in the data set.")
      .def_property_readonly("rank", &Shard::rank, "The rank whose share this is.")
      .def_property_readonly("world", &Shard::world, "How many ranks share the data set.")
      .def_property_readonly(
          "shuffle", [](const Shard& s) { return s.options().shuffle; },
          "Whether each epoch's order is a permutation seeded by (seed, epoch).")
      .def_property_readonly(
          "seed", [](const Shard& s) { return s.options().seed; }, "The shuffle's seed.")
      .def_property_readonly(
          "tail", [](const Shard& s) { return s.options().tail; },
          "What happens to samples that do not divide evenly: ShardTail.PAD, DROP or "
          "EXACT_ONCE.")
      .def("size", &Shard::size, "Samples this rank gets per epoch.")
      .def("total_size", &Shard::total_size, "Samples all ranks together get per epoch.")
      .def(
          "indices",
          [](const Shard& s, py::handle epoch, py::handle consumed) {
            return s.indices(count_arg(epoch, "epoch"), count_arg(consumed, "consumed"));
          },
          "epoch"_a, "consumed"_a = 0,
          "This rank's sample indices for `epoch`, from position `consumed` on.")
      .def(
          "at",
          [](const Shard& s, py::handle epoch, py::handle i) {
            return s.at(count_arg(epoch, "epoch"), count_arg(i, "i"));
          },
          "epoch"_a, "i"_a, "This rank's `i`-th sample index for `epoch` (indices(epoch)[i]).")
      .def(
          "select",
          [](const Shard& s, const std::vector<std::string>& items, py::handle epoch,
             py::handle consumed) {
            return s.select(items, count_arg(epoch, "epoch"), count_arg(consumed, "consumed"));
          },
          "items"_a, "epoch"_a, "consumed"_a = 0,
          "This rank's share of `items` (one per sample, e.g. file names) for `epoch`, from "
          "position `consumed` on.");
}

}  // namespace dtrain::python
