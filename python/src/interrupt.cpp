// An exception the check raises (KeyboardInterrupt, or SystemExit from a user's SIGTERM handler)
// is carried through libdtrain as py::error_already_set and raised again by pybind11.
#include "interrupt.hpp"

#include "dtrain/interrupt.hpp"
#include "signal_check.hpp"

namespace dtrain::python {

void install_interrupt_check(Comm& comm) { set_interrupt_check(comm, python_signal_check()); }

void keep_if_abandoned(std::vector<std::unique_ptr<Buffer>>& held) {
  try {
    throw;
  } catch (const Error& e) {
    if (e.code() == Error::Code::kInvalid) return;
  } catch (...) {
  }
  for (auto& buffer : held) (void)buffer.release();  // deliberately never released
  held.clear();
}

}  // namespace dtrain::python
