#include "comm/call_arguments.hpp"

#include <functional>
#include <string>

#include "comm/algorithms/reduce.hpp"

namespace dtrain::runtime {

// Throws Error (kInvalid) for an op the type does not support: kAvg on integers. `name`: the
// collective called, for the message.
void check_reduce(DType type, ReduceOp op, const char* name) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMin:
    case ReduceOp::kMax:
    case ReduceOp::kProduct:
      return;
    case ReduceOp::kAvg:
      // An integer average would have to round, and every rank would silently lose the
      // remainder; the caller should sum and divide as it sees fit.
      if (is_floating(type)) return;
      throw Error(Error::Code::kInvalid,
                  std::string("dtrain: ") + name +
                      ": avg is defined for floating types; "
                      "expected float32, float64, float16 or bfloat16 (or sum), got " +
                      std::string(to_string(type)));
  }
  throw Error(Error::Code::kInvalid,
              std::string("dtrain: ") + name +
                  ": unknown reduce op; expected sum, avg, min, max or product (0-4), got " +
                  std::to_string(static_cast<int>(op)));
}

void require_buffer(const void* p, std::size_t count, const char* op, const char* which) {
  if (p == nullptr && count > 0) {
    throw Error(Error::Code::kInvalid, std::string("dtrain: ") + op + ": " + which +
                                           " buffer; expected a pointer to " +
                                           std::to_string(count) + " elements, got null");
  }
}

// Throws Error (kInvalid) when the input and output overlap other than in the collective's one
// in-place form, where the input starts at `in_place` (inside the output); `expected` says which
// form that is. Each collective has its own: allreduce and reduce_scatter `in == out`
// (MPI_IN_PLACE: reduce_scatter's result is the first block), allgather this rank's block of the
// output. Any other overlap is refused, whatever the backend would make of it: MPI (and memcpy)
// leave it undefined, and taking `in == out` as in place for allgather too gave rank 1 rank 0's
// data under MPI. The rule reads only this rank's own arguments, so ranks that pass the same
// layout fail alike, before anything is sent.
void check_overlap(const void* in, const void* out, std::size_t in_bytes, std::size_t out_bytes,
                   const void* in_place, const char* op,
                   const std::function<std::string()>& expected) {
  if (in == in_place || in_bytes == 0 || out_bytes == 0) return;
  // std::less gives a total order on unrelated pointers, where < would not.
  const auto* a = static_cast<const char*>(in);
  const auto* b = static_cast<const char*>(out);
  const std::less<const char*> before;
  if (before(a, b + out_bytes) && before(b, a + in_bytes)) {
    throw Error(Error::Code::kInvalid, std::string("dtrain: ") + op +
                                           ": input and output overlap; expected " + expected());
  }
}

std::string same_or_disjoint() { return "the same buffer (in place) or disjoint ones"; }

void check_root(int root, int size, const char* op) {
  if (root < 0 || root >= size) {
    throw Error(Error::Code::kInvalid,
                std::string("dtrain: ") + op + ": root rank out of range; expected 0 to " +
                    std::to_string(size - 1) + ", got " + std::to_string(root));
  }
}

}  // namespace dtrain::runtime
