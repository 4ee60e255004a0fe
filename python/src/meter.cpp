// dtrain::Meter as dtrain._Meter; the Python subclass dtrain.Meter adds step(), a `with` block over
// start_step() and end_step().
#include <cmath>
#include <optional>

#include "bindings.hpp"
#include "dtrain/dtrain.hpp"
#include "paths.hpp"

#include <pybind11/stl.h>

namespace py = pybind11;
using namespace pybind11::literals;

namespace dtrain::python {

void bind_meter(py::module_& m) {
  py::class_<Meter>(m, "_Meter")
      .def(py::init([](Context& ctx, py::handle run_dir) {
             return std::make_unique<Meter>(
                 ctx, run_dir.is_none() ? "" : fs_encode(run_dir, "Meter: run_dir"));
           }),
           "ctx"_a, "run_dir"_a = py::none(), py::keep_alive<1, 2>())
      .def_property_readonly("enabled", &Meter::enabled)
      .def_property_readonly("path", [](const Meter& meter) { return fs_decode(meter.path()); })
      .def(
          "record",
          [](Meter& meter, std::int64_t step, std::int64_t samples, double seconds,
             std::optional<double> data_seconds) {
            if (data_seconds) {
              meter.record(step, samples, seconds, *data_seconds);
            } else {
              meter.record(step, samples, seconds);
            }
          },
          "step"_a, "samples"_a, "seconds"_a, "data_seconds"_a = py::none())
      .def("start_step", &Meter::start_step)
      .def(
          "end_step",
          [](Meter& meter, std::int64_t samples, std::optional<std::int64_t> step) {
            return step ? meter.end_step(samples, *step) : meter.end_step(samples);
          },
          "samples"_a, "step"_a = py::none())
      .def_property_readonly("next_step", &Meter::next_step)
      .def("add_data_seconds", &Meter::add_data_seconds, "seconds"_a)
      .def("flush", &Meter::flush, py::call_guard<py::gil_scoped_release>());
}

}  // namespace dtrain::python
