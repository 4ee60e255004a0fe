// dtrain._allreduce_loop: the C++ reference for bench/python_allreduce_bench.py, which compares
// Python's ctx.allreduce with the same libdtrain call made from C++, in the same process, on the
// same buffers and communicator, so the comparison is not between two runs.
#include <chrono>

#include "bindings.hpp"
#include "buffers.hpp"
#include "dtrain/dtrain.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace dtrain::python {

void bind_bench(py::module_& m) {
  m.def(
      "_allreduce_loop",
      [](Context& ctx, py::handle in, py::handle out, int iterations) {
        const Buffer i(in, Access::kRead, Typing::kReduce, "_allreduce_loop: in");
        const Buffer o(out, Access::kWrite, Typing::kReduce, "_allreduce_loop: out");
        py::gil_scoped_release release;
        const auto start = std::chrono::steady_clock::now();
        for (int k = 0; k < iterations; ++k) {
          ctx.comm().allreduce(i.data(), o.data(), i.count(), i.dtype(), ReduceOp::kSum);
        }
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      },
      "ctx"_a, "in_"_a, "out"_a, "iterations"_a,
      "Seconds for `iterations` float sum allreduces of in into out, called from C++.");
}

}  // namespace dtrain::python
