// dtrain::Preemption for Python. The signal handlers are process-wide and only one Preemption
// may exist at a time, so the object can be closed (or used as a context manager) to restore
// the previous handlers at a known point instead of whenever the garbage collector runs.
#include <climits>
#include <memory>
#include <string>

#include "bindings.hpp"
#include "dtrain/preemption.hpp"
#include "numbers.hpp"

#include <pybind11/stl.h>

namespace py = pybind11;
using namespace pybind11::literals;

namespace dtrain::python {
namespace {

class PyPreemption {
 public:
  PyPreemption(Context& ctx, py::handle signals) {
    if (signals.is_none()) {
      p_ = std::make_unique<Preemption>(ctx);
      return;
    }
    // One signal given alone ("USR1", signal.SIGUSR1) is a list of one: iterating a str would
    // read it letter by letter.
    py::object list = py::reinterpret_borrow<py::object>(signals);
    if (py::isinstance<py::str>(signals) || py::isinstance<py::int_>(signals)) {
      list = py::make_tuple(signals);
    } else if (!py::isinstance<py::iterable>(signals)) {
      throw Error(Error::Code::kInvalid,
                  "dtrain: Preemption: signals; expected a signal name or number, or a list of "
                  "them, got " +
                      std::string(py::repr(signals)));
    }
    std::vector<int> numbers;
    for (py::handle s : list) {
      if (py::isinstance<py::str>(s)) {
        numbers.push_back(signal_from_name(s.cast<std::string>()));
      } else if (const auto n = int_in(s, 1, INT_MAX)) {
        numbers.push_back(static_cast<int>(*n));  // Preemption checks that it is a signal
      } else {
        throw Error(Error::Code::kInvalid,
                    "dtrain: Preemption: signals[" + std::to_string(numbers.size()) +
                        "]; expected a signal name (\"SIGTERM\", \"USR1\") or number, got " +
                        std::string(py::repr(s)));
      }
    }
    p_ = std::make_unique<Preemption>(ctx, std::move(numbers));
  }

  bool should_stop() {
    Preemption& p = open();
    py::gil_scoped_release release;
    return p.should_stop();
  }
  bool requested() { return open().requested(); }
  int signal_received() { return open().signal_received(); }
  std::vector<int> signals() { return open().signals(); }
  void close() { p_.reset(); }
  bool closed() const { return p_ == nullptr; }

 private:
  Preemption& open() {
    if (!p_) throw py::value_error("dtrain: Preemption: closed; expected an open Preemption");
    return *p_;
  }

  std::unique_ptr<Preemption> p_;
};

}  // namespace

void bind_preemption(py::module_& m) {
  m.attr("EXIT_REQUEUE") = kExitRequeue;
  m.def("signal_from_name", &signal_from_name, "name"_a,
        "The number of the signal `name` (\"SIGUSR1\", \"USR1\", \"TERM\"); InvalidError for an "
        "unknown name.");
  py::class_<PyPreemption>(m, "Preemption",
                           "Catches the scheduler's stop signals; should_stop() is collective.")
      .def(py::init<Context&, py::handle>(), "ctx"_a, "signals"_a = py::none(),
           py::keep_alive<1, 2>(),
           "Installs handlers for `signals` (names or numbers), or for DTRAIN_PREEMPT_SIGNALS, "
           "else SIGUSR1 and SIGTERM. One Preemption may be open at a time (InvalidError).")
      .def("should_stop", &PyPreemption::should_stop,
           "Collective: True on every rank once any rank received a signal.")
      .def("requested", &PyPreemption::requested, "Local: whether this process got a signal.")
      .def_property_readonly("signal_received", &PyPreemption::signal_received,
                             "The first signal this process received, 0 if none.")
      .def_property_readonly("signals", &PyPreemption::signals, "The signal numbers watched.")
      .def_property_readonly("closed", &PyPreemption::closed,
                             "Whether close() ran (or the with block ended).")
      .def("close", &PyPreemption::close, "Restores the signal handlers that were there before.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyPreemption& p, py::args) { p.close(); });
}

}  // namespace dtrain::python
