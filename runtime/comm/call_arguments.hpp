// The argument checks of dtrain::Comm's calls, shared by its two files (comm.cpp: the
// collectives; comm_messages.cpp: point-to-point messages and the collectives built on them).
// Each reads only this rank's own arguments, so ranks that pass the same kind fail alike, before
// anything is sent; each throws Error (kInvalid) naming the call and the argument.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

// kAvg on an integer type, or an unknown op. `name`: the call, for the message.
void check_reduce(DType type, ReduceOp op, const char* name);
// A null buffer of `count` > 0 elements; `which` names it ("input", "output", "data").
void require_buffer(const void* p, std::size_t count, const char* op, const char* which);
// Input and output that overlap other than in the call's one in-place form, where the input
// starts at `in_place`; `expected()` says which form that is.
void check_overlap(const void* in, const void* out, std::size_t in_bytes, std::size_t out_bytes,
                   const void* in_place, const char* op,
                   const std::function<std::string()>& expected);
// "the same buffer (in place) or disjoint ones"
std::string same_or_disjoint();
// A root out of 0 .. size - 1.
void check_root(int root, int size, const char* op);

}  // namespace dtrain::runtime
