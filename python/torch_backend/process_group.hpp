// dtrain's torch.distributed backend: a c10d::ProcessGroup whose collectives are libdtrain's Comm
// calls on a Context bootstrapped from the store torch gives the backend (init(ExternalBootstrap)),
// so `init_process_group(backend="dtrain")` works wherever torch's env:// does. One Context per
// process group: torch makes one per new_group(), each with its own store prefix.
//
// Collectives are submitted to libdtrain's engine asynchronously and the call returns at once; a
// completion thread waits for them in submission order (a communicator completes its collectives
// in order), runs what must follow (copying a gathered block out) and completes each Work's
// future, which is what DDP's reducer waits on. Only CPU tensors (tensors.hpp).
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dtrain/dtrain.hpp"

namespace dtrain::torch_backend {

// A collective's handle for torch: completes when libdtrain's Works do (and `finish` ran).
class DtrainWork final : public c10d::Work {
 public:
  DtrainWork(int rank, c10d::OpType type, const char* title, std::vector<at::Tensor> outputs);
  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override;
  // Blocks until done and rethrows its error. `timeout` is not used: libdtrain's collectives have
  // their own deadline (DTRAIN_TIMEOUT), after which the wait throws naming the missing ranks.
  bool wait(std::chrono::milliseconds timeout) override;
  void synchronize() override {}
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

  void complete();
  void fail(std::exception_ptr error);

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

class ProcessGroupDtrain final : public c10d::ProcessGroup {
 public:
  // Bootstraps libdtrain over `store` (collective: every rank of the group constructs it).
  ProcessGroupDtrain(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size);
  ~ProcessGroupDtrain() override;

  const std::string getBackendName() const override { return "dtrain"; }
  const WorldInfo& world() const { return ctx_.world(); }
  Comm& comm() { return ctx_.comm(); }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

 private:
  struct Pending {
    std::vector<Work> works;
    std::function<void()> finish;  // after the works, before the future completes
    std::vector<at::Tensor> keep;  // buffers the works use (scratch, inputs), alive until done
    c10::intrusive_ptr<DtrainWork> work;
  };
  // Queues `pending` for the completion thread and returns its Work.
  c10::intrusive_ptr<c10d::Work> enqueue(Pending pending);
  void complete_in_order();

  Context ctx_;
  std::mutex submit_;  // one thread at a time submits to the Comm (DDP's hooks, the main thread)
  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<Pending> queue_;
  bool stop_ = false;
  std::thread completer_;  // last: it uses everything above
};

}  // namespace dtrain::torch_backend
