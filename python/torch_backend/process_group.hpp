// dtrain's torch.distributed backend: a c10d::ProcessGroup whose collectives are libdtrain's Comm
// calls on the process's Context: dtrain.init()'s when the program made one first, else one
// bootstrapped from the store torch gives the backend (init(ExternalBootstrap)), so that
// `init_process_group(backend="dtrain")` works wherever torch's env:// does, and which a later
// dtrain.init() returns (python/src/shared_context.hpp). One Context per process: its collectives,
// the program's own and DDP's, are one sequence that the Meter, the live page and the hang watch
// follow, and one failure ends them all. A new_group() is a Comm::subgroup of the default group.
//
// Collectives are submitted to libdtrain's engine asynchronously and the call returns at once; a
// completion thread waits for them in submission order (a communicator completes its collectives
// in order), runs what must follow (copying a gathered block out) and completes each Work's
// future, which is what DDP's reducer waits on. CPU tensors (tensors.hpp), and CUDA tensors for
// the collectives that use the caller's tensors as they are, through the NCCL communicator
// (cuda.hpp).
//
// Ctrl-C: a caller blocked in Work::wait or barrier() runs `signal_check` (Python's signal
// handlers, python/src/signal_check.hpp) about every 100 ms; what it throws (KeyboardInterrupt)
// ends the wait. libdtrain cannot cancel a collective, so the group is given up then: its
// collectives in flight fail on the completion thread too, and destruction does not wait for peers.
//
// The GIL: the completion thread may take it (to drop a tensor Python made, to run a future's
// Python callback), so every wait for it or for libdtrain (the destructor, DtrainWork::wait,
// barrier(), MessageWork::wait) runs without the GIL when its caller holds it
// (python/src/gil.hpp).
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dtrain/dtrain.hpp"
#include "tensors.hpp"

namespace dtrain::torch_backend {

// What the group's waits share: the caller's signal check, and whether an interrupted wait has
// given the group up.
struct Interruption {
  std::function<void()> signal_check;  // may be empty (C++ callers)
  std::atomic<bool> given_up{false};
  // Runs signal_check; marks the group given up when it throws, and rethrows.
  void check();
};

// A collective's handle for torch: completes when libdtrain's Works do (and `finish` ran).
class DtrainWork final : public c10d::Work {
 public:
  // `inputs` go to torch's profiler (c10d::Work records their shapes when it is on).
  DtrainWork(int rank, c10d::OpType type, const char* title, std::vector<at::Tensor> outputs,
             std::vector<at::Tensor> inputs, std::shared_ptr<Interruption> interruption);
  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override;
  // Blocks until done and rethrows its error; the collective's own deadline is libdtrain's (the
  // group's timeout, else DTRAIN_TIMEOUT), after which it fails naming the missing ranks. A
  // `timeout` other than torch's kNoTimeout ends this wait sooner with Error (kTimeout) and leaves
  // the collective running, as gloo's does. Ctrl-C ends it with KeyboardInterrupt (above).
  bool wait(std::chrono::milliseconds timeout) override;
  void synchronize() override {}
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

  void complete();
  void fail(std::exception_ptr error);

 private:
  void notify_done();

  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::shared_ptr<Interruption> interruption_;
  std::mutex done_mutex_;
  std::condition_variable done_cv_;  // complete() and fail() wake wait()
};

class ProcessGroupDtrain final : public c10d::ProcessGroup {
 public:
  // The default group, on `context` when given (the process's Context: its rank and size must
  // be `rank` and `size`, and no `timeout` may be given, since the Context's deadline rules),
  // else on a Context bootstrapped over `store` (collective: every rank of the group constructs
  // it), whose collectives' deadline is `timeout` instead of DTRAIN_TIMEOUT. Throws Error
  // (kInvalid) naming what disagrees. `signal_check` is run by blocked callers (above).
  ProcessGroupDtrain(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                     std::optional<std::chrono::milliseconds> timeout,
                     std::function<void()> signal_check,
                     std::shared_ptr<Context> context = nullptr);
  // A group of `parent`'s ranks (torch's new_group while the default group is dtrain's):
  // `ranks` (world ranks of `parent`, in group order) as libdtrain's Comm::subgroup, sharing the
  // parent's bootstrap and connections (no rendezvous); collective over the members only.
  // `timeout`: the deadline of its collectives and messages; nullopt: the parent's. `number`:
  // Comm::subgroup's (the group made without a message); nullopt: the members agree on it.
  ProcessGroupDtrain(c10::intrusive_ptr<ProcessGroupDtrain> parent, const std::vector<int>& ranks,
                     int rank, std::optional<std::chrono::milliseconds> timeout,
                     std::optional<std::int64_t> number, std::function<void()> signal_check);
  ~ProcessGroupDtrain() override;

  const std::string getBackendName() const override { return "dtrain"; }
  const WorldInfo& world() const { return parent_ ? parent_->world() : ctx_->world(); }
  // The Context the group runs on (a new_group's: its default group's).
  const std::shared_ptr<Context>& context() const { return parent_ ? parent_->context() : ctx_; }
  Comm& comm() { return group_ ? *group_ : ctx_->comm(); }
  std::optional<std::int64_t> number() const { return number_; }

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
  // reduce, gather, scatter and the all-to-alls: libdtrain's rooted and all-to-all collectives,
  // any split sizes (rooted_collectives.cpp).
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<std::int64_t>& output_splits,
                                               std::vector<std::int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  // libdtrain's point-to-point messages, each with its own Work (messages.hpp).
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;

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
  // The host communicator for CPU tensors; the NCCL one for CUDA tensors (cuda_comm()).
  Comm& comm_for(const at::Tensor& t, std::string_view op);
  // What libdtrain's waits run: Ctrl-C, and the refusal once the group is given up.
  std::function<void()> interrupt_check() const;
  // `inputs`: what torch's profiler records as the call's input shapes.
  c10::intrusive_ptr<DtrainWork> make_work(c10d::OpType type, const char* title,
                                           std::vector<at::Tensor> outputs,
                                           std::vector<at::Tensor> inputs);
  // allgather and allgather_coalesced: every rank's `packed` (a contiguous tensor, its bytes the
  // same number on every rank) gathered into one buffer, then rank r's block copied into the
  // tensors of outs[r] in order, each taking its own bytes.
  c10::intrusive_ptr<c10d::Work> allgather_into(const at::Tensor& packed,
                                                std::vector<std::vector<at::Tensor>> outs,
                                                std::vector<at::Tensor> inputs, c10d::OpType type,
                                                const char* title);
  // all_reduce of a sparse COO tensor: summed as gloo does (sparse_allreduce.cpp).
  c10::intrusive_ptr<c10d::Work> sparse_allreduce(at::Tensor& tensor,
                                                  const c10d::AllreduceOptions& opts);

  std::shared_ptr<Interruption> interruption_;     // before ctx_: libdtrain's check uses it
  std::shared_ptr<Context> ctx_;                   // the default group's: the process's Context
  c10::intrusive_ptr<ProcessGroupDtrain> parent_;  // a new_group's: the group it is made of
  std::optional<Comm> group_;                      // ... and its Comm::subgroup of it
  std::optional<std::int64_t> number_;             // ... made with this number
  bool device_check_set_ = false;  // interrupt_check() is on the NCCL communicator (under submit_)
  std::mutex submit_;  // one thread at a time submits to the Comm (DDP's hooks, the main thread)
  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<Pending> queue_;
  bool stop_ = false;
  std::thread completer_;  // last: it uses everything above
};

}  // namespace dtrain::torch_backend
