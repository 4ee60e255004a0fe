// What a DLPack exporter hands over, checked before it is read: __dlpack_device__() must return a
// (device_type, device_id) pair of ints and __dlpack__() a fresh "dltensor" capsule whose DLTensor
// is well formed. Any object may define the two methods, so each answer is checked and a wrong one
// is refused in the caller's words ("dtrain: allreduce: buf: __dlpack_device__() returned 'cpu';
// expected ..."), never with pybind11's "Unable to cast Python instance" or a bare capsule error.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <utility>

#include "dlpack.hpp"

namespace dtrain::python {

// obj.__dlpack_device__(), as (device_type, device_id). `prefix`: "dtrain: allreduce: buf: ".
std::pair<int, int> dlpack_device_of(pybind11::handle obj, const std::string& prefix);

// source.__dlpack__(), checked to be an unused "dltensor" capsule; `obj` names the exporter in
// messages (source may be obj.detach()).
pybind11::object dlpack_capsule_of(pybind11::handle source, pybind11::handle obj,
                                   const std::string& prefix);

// The capsule's DLTensor, checked: ndim >= 0, a shape for ndim > 0 with no negative extent, a
// non-zero element width, data for a non-empty tensor.
const dlpack::DLTensor& dltensor_of(const pybind11::object& capsule, pybind11::handle obj,
                                    const std::string& prefix);

}  // namespace dtrain::python
