// An async collective as Python holds it: the dtrain::Work and the buffers it reads and writes.
// The buffers stay held (their memory pinned in place) until the collective is done, even when
// Python drops the handle first: destroying an unfinished one waits for it, because libdtrain
// still writes into the memory after the handle is gone.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "buffers.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain::python {

class PyWork {
 public:
  PyWork(Work work, std::vector<std::unique_ptr<Buffer>> held, pybind11::object result)
      : work_(std::move(work)), held_(std::move(held)), result_(std::move(result)) {}
  ~PyWork();
  PyWork(const PyWork&) = delete;
  PyWork& operator=(const PyWork&) = delete;

  // Blocks (without the GIL) until done; returns the collective's output object.
  pybind11::object wait();
  bool test();
  std::uint64_t sequence() const { return work_.sequence(); }
  int source() const { return work_.source(); }
  bool done() const { return done_; }

 private:
  void finish();

  Work work_;
  std::vector<std::unique_ptr<Buffer>> held_;
  pybind11::object result_;
  bool done_ = false;
};

}  // namespace dtrain::python
