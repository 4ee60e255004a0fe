// One bind_* function per part of libdtrain's API; module.cpp calls them in order.
#pragma once

#include <pybind11/pybind11.h>

namespace dtrain::python {

void bind_errors(pybind11::module_& m);
void bind_comm(pybind11::module_& m);
void bind_meter(pybind11::module_& m);
void bind_checkpoint(pybind11::module_& m);
void bind_shard(pybind11::module_& m);
void bind_preemption(pybind11::module_& m);
void bind_bench(pybind11::module_& m);

}  // namespace dtrain::python
