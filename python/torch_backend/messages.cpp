#include "messages.hpp"

#include <ATen/ATen.h>

#include <string>
#include <thread>
#include <utility>

#include "gil.hpp"
#include "process_group.hpp"
#include "tensors.hpp"

namespace dtrain::torch_backend {
namespace {

// How often a wait with a timeout of its own tests the message: short against a message's
// latency over the network, long enough to cost nothing.
constexpr auto kTestInterval = std::chrono::microseconds(200);

}  // namespace

MessageWork::MessageWork(int rank, c10d::OpType type, const char* title, dtrain::Work work,
                         at::Tensor tensor)
    : Work(rank, type, title, std::vector<at::Tensor>{tensor}),
      work_(std::move(work)),
      tensor_(std::move(tensor)) {}

void MessageWork::settle(std::exception_ptr error) {
  std::lock_guard lock(mutex_);
  if (completed_) return;
  completed_ = true;
  exception_ = std::move(error);
  // torch's profiler event ends here, as gloo's Works end theirs (c10d::Work::finish): a Work
  // Python still holds would otherwise leave it open past the profiled block.
  if (recordFunctionEndCallback_) std::exchange(recordFunctionEndCallback_, nullptr)();
  cv_.notify_all();
}

bool MessageWork::isCompleted() {
  try {
    if (!work_.test()) return false;
  } catch (...) {
    settle(std::current_exception());
    return true;
  }
  settle(nullptr);
  return true;
}

bool MessageWork::isSuccess() const {
  std::lock_guard lock(mutex_);
  return completed_ && !exception_;
}

std::exception_ptr MessageWork::exception() const {
  std::lock_guard lock(mutex_);
  return exception_;
}

int MessageWork::sourceRank() const { return work_.source(); }

bool MessageWork::wait(std::chrono::milliseconds timeout) {
  // Without the GIL should the caller hold it (torch's Work.wait() releases it; a C++ caller might
  // not), as every wait of the group's on a backend thread (process_group.hpp).
  python::without_gil([&] {
    if (timeout == ::kNoTimeout) {
      try {
        work_.wait();
      } catch (...) {
        settle(std::current_exception());
        throw;
      }
      settle(nullptr);
      return;
    }
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (!isCompleted()) {
      if (std::chrono::steady_clock::now() >= until) {
        throw Error(Error::Code::kTimeout,
                    "dtrain: torch: Work.wait: the message was not done within the " +
                        std::to_string(timeout.count()) +
                        " ms given; it goes on (wait again, or let the group's timeout end it)");
      }
      std::this_thread::sleep_for(kTestInterval);
    }
    if (auto e = exception()) std::rethrow_exception(e);
  });
  return true;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::send(std::vector<at::Tensor>& tensors, int dst,
                                                        int tag) {
  at::Tensor& t = only(tensors, "send");
  const Buffer b = moved(t, "send", "tensor");
  std::lock_guard lock(submit_);
  dtrain::Work w = comm().isend(b.data, b.count, b.type, dst, tag);
  return c10::make_intrusive<MessageWork>(getRank(), c10d::OpType::SEND, "dtrain:send",
                                          std::move(w), t);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::recv(std::vector<at::Tensor>& tensors, int src,
                                                        int tag) {
  at::Tensor& t = only(tensors, "recv");
  const Buffer b = moved(t, "recv", "tensor");
  std::lock_guard lock(submit_);
  dtrain::Work w = comm().irecv(b.data, b.count, b.type, src, tag);
  return c10::make_intrusive<MessageWork>(getRank(), c10d::OpType::RECV, "dtrain:recv",
                                          std::move(w), t);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::recvAnysource(std::vector<at::Tensor>& tensors,
                                                                 int tag) {
  at::Tensor& t = only(tensors, "recv");
  const Buffer b = moved(t, "recv", "tensor");
  std::lock_guard lock(submit_);
  dtrain::Work w = comm().irecv(b.data, b.count, b.type, Comm::kAnySource, tag);
  return c10::make_intrusive<MessageWork>(getRank(), c10d::OpType::RECVANYSOURCE,
                                          "dtrain:recvAnySource", std::move(w), t);
}

}  // namespace dtrain::torch_backend
