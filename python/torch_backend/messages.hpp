// torch's send/recv on backend "dtrain": libdtrain's point-to-point messages (Comm::isend,
// irecv), each with a Work of its own.
//
// Why not the group's completion thread (process_group.hpp): it completes collectives in the order
// they were submitted, which is right for collectives (a communicator finishes them in order) and
// wrong for messages, which finish in whatever order their peers send. A receive queued there
// would hold back every later collective's completion until its sender sends; if that sender
// first waits in a collective for this rank, both wait for good. So a message's Work asks
// libdtrain directly: isCompleted() tests, wait() waits (Ctrl-C included, through the group's
// interrupt check that libdtrain's waits run).
#pragma once

#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace dtrain::torch_backend {

class MessageWork final : public c10d::Work {
 public:
  // `tensor`: the message's memory, kept alive until the Work is destroyed.
  MessageWork(int rank, c10d::OpType type, const char* title, dtrain::Work work, at::Tensor tensor);
  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  // The sender of a completed receive (recv_anysource's answer); -1 before.
  int sourceRank() const override;
  std::vector<at::Tensor> result() override { return {tensor_}; }
  // Blocks until done and rethrows its error; libdtrain's deadline is the group's timeout. A
  // `timeout` other than kNoTimeout ends this wait sooner with Error (kTimeout), the message
  // still in flight.
  bool wait(std::chrono::milliseconds timeout) override;
  void synchronize() override {}

 private:
  // Records the outcome once libdtrain's Work is done (`error`: its failure, or null).
  void settle(std::exception_ptr error);

  dtrain::Work work_;
  at::Tensor tensor_;
};

}  // namespace dtrain::torch_backend
