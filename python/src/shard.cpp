// dtrain::Shard as dtrain._Shard; the Python subclass dtrain.Shard adds the torch Sampler
// protocol (set_epoch, len, iteration). Indices come from libdtrain, so a Python rank reads
// exactly the samples a C++ rank with the same arguments would.
#include "dtrain/shard.hpp"
#include "bindings.hpp"

#include <pybind11/stl.h>

namespace py = pybind11;
using namespace pybind11::literals;

namespace dtrain::python {
namespace {

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
      .def(py::init([](std::uint64_t num_samples, int rank, int world, bool shuffle,
                       std::uint64_t seed, py::handle tail) {
             return std::make_unique<Shard>(num_samples, rank, world,
                                            ShardOptions{shuffle, seed, tail_arg(tail)});
           }),
           "num_samples"_a, "rank"_a, "world"_a, "shuffle"_a = true, "seed"_a = 0, "tail"_a = "pad")
      .def_property_readonly("num_samples", &Shard::num_samples)
      .def_property_readonly("rank", &Shard::rank)
      .def_property_readonly("world", &Shard::world)
      .def_property_readonly("shuffle", [](const Shard& s) { return s.options().shuffle; })
      .def_property_readonly("seed", [](const Shard& s) { return s.options().seed; })
      .def_property_readonly("tail", [](const Shard& s) { return s.options().tail; })
      .def("size", &Shard::size, "Samples this rank gets per epoch.")
      .def("total_size", &Shard::total_size, "Samples all ranks together get per epoch.")
      .def("indices", &Shard::indices, "epoch"_a, "consumed"_a = 0,
           "This rank's sample indices for `epoch`, from position `consumed` on.")
      .def("at", &Shard::at, "epoch"_a, "i"_a)
      .def(
          "select",
          [](const Shard& s, const std::vector<std::string>& items, std::uint64_t epoch,
             std::uint64_t consumed) { return s.select(items, epoch, consumed); },
          "items"_a, "epoch"_a, "consumed"_a = 0);
}

}  // namespace dtrain::python
