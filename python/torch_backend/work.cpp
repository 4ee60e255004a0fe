// The Work a dtrain collective returns to torch, and the Ctrl-C check its waits run (declared in
// process_group.hpp, beside the ProcessGroup that makes them).
#include <ATen/ATen.h>

#include <chrono>
#include <string>
#include <utility>

#include "gil.hpp"
#include "process_group.hpp"

namespace dtrain::torch_backend {
namespace {

// How often a blocked caller runs the signal check: Ctrl-C is seen within this.
constexpr std::chrono::milliseconds kCheckInterval{100};

}  // namespace

void Interruption::check() {
  if (!signal_check) return;
  try {
    signal_check();
  } catch (...) {
    given_up = true;
    throw;
  }
}

DtrainWork::DtrainWork(int rank, c10d::OpType type, const char* title,
                       std::vector<at::Tensor> outputs, std::vector<at::Tensor> inputs,
                       std::shared_ptr<Interruption> interruption)
    : Work(rank, type, title, inputs),
      outputs_(std::move(outputs)),
      future_(
          c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))),
      interruption_(std::move(interruption)) {}

bool DtrainWork::isCompleted() { return future_->completed(); }
bool DtrainWork::isSuccess() const { return future_->completed() && !future_->hasError(); }
std::exception_ptr DtrainWork::exception() const { return future_->exception_ptr(); }
std::vector<at::Tensor> DtrainWork::result() { return outputs_; }

bool DtrainWork::wait(std::chrono::milliseconds timeout) {
  // torch's Work.wait() releases the GIL before calling this; a C++ caller holding it would wait
  // for the completion thread, which may need it (process_group.cpp, complete_in_order).
  python::without_gil([&] {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      {
        std::unique_lock lock(done_mutex_);
        if (done_cv_.wait_for(lock, kCheckInterval, [this] { return future_->completed(); }))
          return;
      }
      interruption_->check();  // without the lock: it takes the GIL
      if (timeout != ::kNoTimeout && std::chrono::steady_clock::now() - start >= timeout) {
        throw Error(
            Error::Code::kTimeout,
            "dtrain: torch: Work.wait: not done within the " + std::to_string(timeout.count()) +
                " ms given; the collective goes on (wait again, or let the group's deadline "
                "end it)");
      }
    }
  });
  if (future_->hasError()) std::rethrow_exception(future_->exception_ptr());
  return true;
}

void DtrainWork::notify_done() {
  // torch's profiler event ends here, as gloo's Works end theirs (c10d::Work::finish): a Work
  // Python still holds would otherwise leave it open past the profiled block.
  if (recordFunctionEndCallback_) std::exchange(recordFunctionEndCallback_, nullptr)();
  { std::lock_guard lock(done_mutex_); }  // a waiter between its test and its sleep sees it
  done_cv_.notify_all();
}

void DtrainWork::complete() {
  future_->markCompleted(c10::IValue(outputs_));
  notify_done();
}

void DtrainWork::fail(std::exception_ptr error) {
  future_->setError(std::move(error));
  notify_done();
}

}  // namespace dtrain::torch_backend
