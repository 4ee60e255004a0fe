// dtrain.FusedAllreduce: a model's gradient arrays registered once and reduced together in place
// by run(). The arrays stay held (their memory pinned) for the object's lifetime, since libdtrain
// keeps their addresses.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "buffers.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::python {

class PyFused {
 public:
  // Every array must be writable, contiguous and of one element type. Throws py::value_error
  // naming the first one that is not (tensors[i]).
  PyFused(Comm& comm, const pybind11::list& tensors, ReduceOp op, std::size_t bucket_bytes,
          std::optional<DType> dtype);
  void run();
  std::size_t bucket_count() const { return fused_->bucket_count(); }
  std::size_t bucket_bytes() const { return fused_->bucket_bytes(); }
  std::size_t size() const { return held_.size(); }
  DType dtype() const { return type_; }

 private:
  std::vector<std::unique_ptr<Buffer>> held_;
  DType type_ = DType::kFloat32;
  std::unique_ptr<FusedAllreduce> fused_;
};

}  // namespace dtrain::python
