// libdtrain's paths and messages are bytes, not necessarily UTF-8 (a checkpoint directory may be
// any name the file system allows). These convert the way os.fsencode/os.fsdecode do, so a
// str or os.PathLike from Python round-trips through libdtrain unchanged.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace dtrain::python {

// str, bytes or os.PathLike -> the bytes of the path. `what` names the argument in messages
// ("Checkpointer: dir"): a NUL byte is a py::value_error (the system would cut the path there,
// and "ck\0pt" would be "ck"), another type a py::type_error.
std::string fs_encode(pybind11::handle path, const std::string& what);
// Bytes -> str, undecodable bytes as surrogates (os.fsdecode).
pybind11::str fs_decode(const std::string& bytes);

}  // namespace dtrain::python
