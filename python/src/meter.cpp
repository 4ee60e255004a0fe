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
           "ctx"_a, "run_dir"_a = py::none(), py::keep_alive<1, 2>(),
           "Records into `run_dir`/rank-NNNNN.jsonl; `run_dir` None means DTRAIN_RUN_DIR, and "
           "without either the meter is disabled (records are dropped).")
      .def_property_readonly("enabled", &Meter::enabled, "Whether records are written.")
      .def_property_readonly(
          "path", [](const Meter& meter) { return fs_decode(meter.path()); },
          "The file written, \"\" when disabled.")
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
          "step"_a, "samples"_a, "seconds"_a, "data_seconds"_a = py::none(),
          "Records step `step` of `samples` samples that took `seconds` and ended now "
          "(`data_seconds` of it loading data); call it right after the step.")
      .def("start_step", &Meter::start_step,
           "Starts timing a step; end_step() records it. A start without its end (the step "
           "failed) is replaced by the next start.")
      .def(
          "end_step",
          [](Meter& meter, std::int64_t samples, std::optional<std::int64_t> step) {
            return step ? meter.end_step(samples, *step) : meter.end_step(samples);
          },
          "samples"_a, "step"_a = py::none(),
          "Records the step started by start_step() with `samples` samples, as number `step`, "
          "else next_step; returns the number recorded.")
      .def_property_readonly("next_step", &Meter::next_step,
                             "The number the next step gets when none is given: one past the "
                             "last recorded, or past the step of the checkpoint loaded.")
      .def("add_data_seconds", &Meter::add_data_seconds, "seconds"_a,
           "Adds `seconds` of data loading to the next record (a loader timed apart).")
      .def("flush", &Meter::flush, py::call_guard<py::gil_scoped_release>(),
           "Writes the records kept in memory to the file now.");
}

}  // namespace dtrain::python
