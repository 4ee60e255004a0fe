// dtrain._dtrain: the compiled half of `import dtrain` (python/dtrain/__init__.py is the rest).
// Every call goes straight to libdtrain; nothing here reimplements it.
#include "bindings.hpp"

PYBIND11_MODULE(_dtrain, m) {
  m.doc() = "libdtrain's C++ API (runtime/include/dtrain/*.hpp) for Python";
  m.attr("__version__") = DTRAIN_PYTHON_VERSION;
  dtrain::python::bind_errors(m);
  dtrain::python::bind_comm(m);
  dtrain::python::bind_meter(m);
  dtrain::python::bind_checkpoint(m);
  dtrain::python::bind_shard(m);
  dtrain::python::bind_preemption(m);
  dtrain::python::bind_bench(m);
}
