// Python ints as C++ integers, for arguments that pybind11 would otherwise convert with its own
// messages ("incompatible function arguments", "Unable to cast Python instance to C++ type"),
// which name neither the argument nor the value. Callers throw their own error naming both.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>

namespace dtrain::python {

// The value of a Python int, or of an object with __index__ (numpy.int64), when it lies in
// [low, high]; nullopt for anything else, bool included (True is not a count).
std::optional<long long> int_in(pybind11::handle value, long long low, long long high);
// The same from 0 to 2^64 - 1.
std::optional<std::uint64_t> uint64_of(pybind11::handle value);

}  // namespace dtrain::python
