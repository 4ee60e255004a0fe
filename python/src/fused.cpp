#include "fused.hpp"

#include <string>

#include "interrupt.hpp"

namespace py = pybind11;

namespace dtrain::python {

PyFused::PyFused(Comm& comm, const py::list& tensors, ReduceOp op, std::size_t bucket_bytes,
                 std::optional<DType> dtype) {
  std::vector<FusedAllreduce::Tensor> list;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::string what = "FusedAllreduce: tensors[" + std::to_string(i) + "]";
    held_.push_back(
        std::make_unique<Buffer>(tensors[i], Access::kWrite, Typing::kReduce, what, dtype));
    const Buffer& b = *held_.back();
    if (i == 0) type_ = b.dtype();
    if (b.dtype() != type_) {
      throw py::value_error("dtrain: " + what + ": element type; expected " + dtype_name(type_) +
                            " like tensors[0], got " + dtype_name(b.dtype()));
    }
    list.push_back({b.data(), b.count()});
  }
  fused_ = std::make_unique<FusedAllreduce>(comm, std::move(list), type_, op, bucket_bytes);
}

void PyFused::run() {
  py::gil_scoped_release release;
  try {
    fused_->run();
  } catch (...) {
    keep_if_abandoned(held_);
    throw;
  }
}

}  // namespace dtrain::python
