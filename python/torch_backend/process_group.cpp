#include "process_group.hpp"

#include <ATen/ATen.h>

#include <cstring>
#include <memory>
#include <utility>

#include "cuda.hpp"
#include "dtrain/interrupt.hpp"
#include "gil.hpp"
#include "shared_context.hpp"
#include "tensors.hpp"

namespace dtrain::torch_backend {
namespace {

// libdtrain's rendezvous through the store torch gave the backend. Why not libdtrain's own env://
// bootstrap: under env:// torch's rank 0 already serves its TCPStore on MASTER_PORT, and
// libdtrain's TCP store would want the same port (one of the two fails with EADDRINUSE, or a
// client reaches the wrong server). Through torch's store there is one rendezvous, torch's, and
// libdtrain's sockets listen on ports the system picks; a torch subgroup gets its own prefix of
// it for free.
class TorchStore final : public BootstrapStore {
 public:
  explicit TorchStore(c10::intrusive_ptr<c10d::Store> store) : store_(std::move(store)) {}
  void set(const std::string& key, const std::string& value) override {
    store_->set(key, std::vector<std::uint8_t>(value.begin(), value.end()));
  }
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override {
    store_->wait({key}, timeout);
    const std::vector<std::uint8_t> v = store_->get(key);
    return std::string(v.begin(), v.end());
  }

 private:
  c10::intrusive_ptr<c10d::Store> store_;
};

// The default group's Context: `shared` (the process's), checked against torch's rank, size and
// timeout, or a new one over torch's store.
std::shared_ptr<Context> default_context(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                         int size, std::optional<std::chrono::milliseconds> timeout,
                                         std::shared_ptr<Context> shared) {
  if (!shared) {
    return python::share(
        dtrain::init(ExternalBootstrap{rank, size, std::make_shared<TorchStore>(store), timeout}));
  }
  const WorldInfo& w = shared->world();
  if (w.rank != rank || w.size != size) {
    throw Error(Error::Code::kInvalid,
                "dtrain: torch: init_process_group: rank " + std::to_string(rank) + " of " +
                    std::to_string(size) + "; expected rank " + std::to_string(w.rank) + " of " +
                    std::to_string(w.size) +
                    ", as this process's dtrain Context (dtrain.init()) has it: the group runs on "
                    "that Context (call init_process_group with its rank and size, or before "
                    "dtrain.init())");
  }
  if (timeout) {
    throw Error(Error::Code::kInvalid,
                "dtrain: torch: init_process_group: timeout of " +
                    std::to_string(timeout->count()) +
                    " ms given while this process holds a dtrain Context (dtrain.init()): the "
                    "group runs on that Context, whose collectives' deadline is DTRAIN_TIMEOUT; "
                    "expected no timeout (set DTRAIN_TIMEOUT), or init_process_group before "
                    "dtrain.init() (the Context then takes the group's timeout)");
  }
  return shared;
}

}  // namespace

ProcessGroupDtrain::ProcessGroupDtrain(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                       int size, std::optional<std::chrono::milliseconds> timeout,
                                       std::function<void()> signal_check,
                                       std::shared_ptr<Context> context)
    : ProcessGroup(rank, size),
      interruption_(std::make_shared<Interruption>()),
      ctx_(default_context(store, rank, size, timeout, std::move(context))) {
  interruption_->signal_check = std::move(signal_check);
  // libdtrain runs this in its own waits: the completion thread's (which stop once a caller's
  // wait was interrupted) and barrier()'s on the caller's thread (which the signal check ends).
  // On a shared Context it replaces dtrain.init()'s check, which runs the same signal handlers:
  // no wait is under way on it here, since this thread is making the group.
  set_interrupt_check(comm(), interrupt_check());
  init();  // c10d's own set-up (API usage logging), as every backend calls it
  // Last: a constructor that throws runs no destructor, and a joinable std::thread destroyed
  // unjoined ends the process (std::terminate).
  completer_ = std::thread([this] { complete_in_order(); });
}

ProcessGroupDtrain::ProcessGroupDtrain(c10::intrusive_ptr<ProcessGroupDtrain> parent,
                                       const std::vector<int>& ranks, int rank,
                                       std::optional<std::chrono::milliseconds> timeout,
                                       std::optional<std::int64_t> number,
                                       std::function<void()> signal_check)
    : ProcessGroup(rank, static_cast<int>(ranks.size())),
      interruption_(std::make_shared<Interruption>()),
      parent_(std::move(parent)),
      group_(parent_->comm().subgroup(ranks, timeout, number)),
      number_(number) {
  if (!group_ || group_->rank() != rank) {
    throw Error(Error::Code::kInvalid,
                "dtrain: torch: new_group: rank " + std::to_string(rank) +
                    "; expected this process's place among the group's ranks");
  }
  interruption_->signal_check = std::move(signal_check);
  set_interrupt_check(comm(), interrupt_check());
  init();
  completer_ = std::thread([this] { complete_in_order(); });  // last, as above
}

c10::intrusive_ptr<DtrainWork> ProcessGroupDtrain::make_work(c10d::OpType type, const char* title,
                                                             std::vector<at::Tensor> outputs,
                                                             std::vector<at::Tensor> inputs) {
  return c10::make_intrusive<DtrainWork>(rank_, type, title, std::move(outputs), std::move(inputs),
                                         interruption_);
}

ProcessGroupDtrain::~ProcessGroupDtrain() {
  // Python runs this with the GIL held (destroy_process_group, or whoever drops the group's last
  // reference), and the completion thread may need the GIL before it can end: to drop the last
  // reference to a tensor Python made (torch then decrefs the tensor's PyObject, under the GIL)
  // and to run a future's Python callbacks (then()). Joining it with the GIL held deadlocked
  // (tests/integration/python/torch_destroy_loop.py: in a create/all_reduce/destroy loop, after 1
  // to 80 loops; at the first with a callback outstanding). The Context's end waits too, for the
  // other ranks' destructors and libdtrain's progress thread: also without the GIL, so that the
  // process's other Python threads run.
  python::without_gil([this] {
    {
      std::lock_guard lock(queue_mutex_);
      stop_ = true;
    }
    queue_cv_.notify_all();
    // Waits for the collectives still queued: their buffers and the Context must outlive them.
    completer_.join();
    group_.reset();  // a new_group's engine and thread end here
    // The Context ends here when the group held it last (not as a member afterwards, with the
    // GIL); dtrain.init()'s holder keeps it otherwise.
    ctx_.reset();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::enqueue(Pending pending) {
  c10::intrusive_ptr<c10d::Work> work = pending.work;
  {
    std::lock_guard lock(queue_mutex_);
    queue_.push_back(std::move(pending));
  }
  queue_cv_.notify_one();
  return work;
}

void ProcessGroupDtrain::complete_in_order() {
  for (;;) {
    Pending p;
    {
      std::unique_lock lock(queue_mutex_);
      queue_cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and nothing left
      p = std::move(queue_.front());
      queue_.pop_front();
    }
    // No lock held while completing: the future's callbacks (DDP's reducer, a user's then())
    // may submit the next collective.
    try {
      for (Work& w : p.works) w.wait();
      if (p.finish) p.finish();
    } catch (...) {
      p.work->fail(std::current_exception());
      continue;
    }
    p.work->complete();
    // Dropping `p` may take the GIL (a tensor whose last reference it holds, its PyObject then
    // decref'd by torch), so no one may wait for this thread with the GIL held: the destructor
    // and DtrainWork::wait release it.
  }
}

std::function<void()> ProcessGroupDtrain::interrupt_check() const {
  return [i = interruption_] {
    if (i->given_up) {
      throw Error(Error::Code::kComm,
                  "dtrain: torch: the process group was given up after an interrupted wait "
                  "(KeyboardInterrupt): a collective cannot be cancelled");
    }
    i->check();
  };
}

Comm& ProcessGroupDtrain::comm_for(const at::Tensor& t, std::string_view op) {
  if (!t.is_cuda()) return comm();
  if (!ctx_) {
    refuse(op, "tensor on " + t.device().str() +
                   ": a group made by new_group carries CPU tensors only (yet); expected CPU "
                   "tensors, or CUDA ones on the default group");
  }
  Comm& device = cuda_comm(*ctx_, t, op);
  if (!device_check_set_) {
    set_interrupt_check(device, interrupt_check());
    device_check_set_ = true;
  }
  return device;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::broadcast(std::vector<at::Tensor>& tensors,
                                                             const c10d::BroadcastOptions& opts) {
  at::Tensor& t = only(tensors, "broadcast");
  const Buffer b = moved(t, "broadcast", "tensor", Placement::kCpuOrCuda);
  std::lock_guard lock(submit_);  // before comm_for: it may create the NCCL communicator
  Comm& c = comm_for(t, "broadcast");
  Pending p{{c.broadcast_async(b.data, b.count, b.type, static_cast<int>(opts.rootRank))},
            {},
            {t},
            make_work(c10d::OpType::BROADCAST, "dtrain:broadcast", tensors, tensors)};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::allreduce(std::vector<at::Tensor>& tensors,
                                                             const c10d::AllreduceOptions& opts) {
  at::Tensor& t = only(tensors, "allreduce");
  if (t.is_sparse()) return sparse_allreduce(t, opts);
  const Buffer b = reduced(t, "allreduce", "tensor", Placement::kCpuOrCuda);
  const ReduceOp op = reduce_op(opts.reduceOp, "allreduce");
  std::lock_guard lock(submit_);
  Comm& c = comm_for(t, "allreduce");
  Pending p{{c.allreduce_async(b.data, b.data, b.count, b.type, op)},
            {},
            {t},
            make_work(c10d::OpType::ALLREDUCE, "dtrain:all_reduce", tensors, tensors)};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  const ReduceOp op = reduce_op(opts.reduceOp, "allreduce_coalesced");
  std::vector<Buffer> buffers;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    buffers.push_back(reduced(tensors[i], "allreduce_coalesced",
                              "tensors[" + std::to_string(i) + "]", Placement::kCpuOrCuda));
    same_device(tensors[0], tensors[i], "allreduce_coalesced",
                "tensors[" + std::to_string(i) + "]");
  }
  std::lock_guard lock(submit_);
  Comm& c = tensors.empty() ? comm() : comm_for(tensors[0], "allreduce_coalesced");
  Pending p{
      {},
      {},
      tensors,
      make_work(c10d::OpType::ALLREDUCE_COALESCED, "dtrain:allreduce_coalesced", tensors, tensors)};
  for (const Buffer& b : buffers)
    p.works.push_back(c.allreduce_async(b.data, b.data, b.count, b.type, op));
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& /*opts*/) {
  at::Tensor& in = only(inputs, "allgather");
  moved(in, "allgather", "input");
  std::vector<at::Tensor>& outs = per_rank(outputs, size_, "allgather", "outputs");
  std::vector<std::vector<at::Tensor>> blocks;
  for (std::size_t r = 0; r < outs.size(); ++r) {
    same_shape(in, outs[r], "allgather", ("outputs[" + std::to_string(r) + "]").c_str());
    moved(outs[r], "allgather", "outputs[" + std::to_string(r) + "]");
    blocks.push_back({outs[r]});
  }
  return allgather_into(in, std::move(blocks), inputs, c10d::OpType::ALLGATHER,
                        "dtrain:all_gather");
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& /*opts*/) {
  constexpr const char* kOp = "allgather_coalesced";
  if (outputs.size() != static_cast<std::size_t>(size_)) {
    refuse(kOp, "output_tensor_lists: " + std::to_string(outputs.size()) +
                    " lists; expected one per rank (" + std::to_string(size_) + ")");
  }
  // One allgather for them all: each rank's inputs packed one after another (any element types).
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    bytes += moved(inputs[i], kOp, "input_tensor_list[" + std::to_string(i) + "]").count;
  }
  for (std::size_t r = 0; r < outputs.size(); ++r) {
    const std::string list = "output_tensor_lists[" + std::to_string(r) + "]";
    if (outputs[r].size() != inputs.size()) {
      refuse(kOp, list + ": " + std::to_string(outputs[r].size()) + " tensors; expected " +
                      std::to_string(inputs.size()) + ", one per input tensor");
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::string what = list + "[" + std::to_string(i) + "]";
      same_shape(inputs[i], outputs[r][i], kOp, what.c_str());
      moved(outputs[r][i], kOp, what);
    }
  }
  at::Tensor packed = at::empty({static_cast<std::int64_t>(bytes)}, at::kByte);
  auto* dst = static_cast<std::uint8_t*>(packed.data_ptr());
  for (const at::Tensor& t : inputs) {
    const std::size_t n = bytes_of(t);
    if (n > 0) std::memcpy(dst, t.data_ptr(), n);
    dst += n;
  }
  // Titled as gloo titles it (and torch's profiling tests look for it): "all_gather".
  return allgather_into(packed, outputs, inputs, c10d::OpType::ALLGATHER_COALESCED,
                        "dtrain:all_gather");
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::allgather_into(
    const at::Tensor& packed, std::vector<std::vector<at::Tensor>> outs,
    std::vector<at::Tensor> inputs, c10d::OpType type, const char* title) {
  // torch's lists of tensors are not one buffer: gather into one, then copy each block out.
  const std::size_t bytes = bytes_of(packed);
  at::Tensor flat = at::empty({static_cast<std::int64_t>(bytes) * size_}, at::kByte);
  std::vector<at::Tensor> results;
  for (const auto& list : outs) results.insert(results.end(), list.begin(), list.end());
  std::lock_guard lock(submit_);
  Pending p{{},
            [outs, flat, bytes] {
              const auto* src = static_cast<const std::uint8_t*>(flat.data_ptr());
              for (std::size_t r = 0; r < outs.size(); ++r) {
                const std::uint8_t* from = src + r * bytes;
                for (const at::Tensor& t : outs[r]) {
                  const std::size_t n = bytes_of(t);
                  if (n > 0) std::memcpy(t.data_ptr(), from, n);
                  from += n;
                }
              }
            },
            {packed, flat},
            make_work(type, title, std::move(results), std::move(inputs))};
  // Nothing to move (every input empty, on every rank alike): no collective at all.
  if (bytes > 0) {
    p.works.push_back(
        comm().allgather_async(packed.data_ptr(), flat.data_ptr(), bytes, DType::kUInt8));
  }
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::_allgather_base(
    at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& /*opts*/) {
  const Buffer in = moved(input, "_allgather_base", "input", Placement::kCpuOrCuda);
  moved(output, "_allgather_base", "output", Placement::kCpuOrCuda);
  same_device(input, output, "_allgather_base", "output");
  if (output.scalar_type() != input.scalar_type() ||
      output.numel() != input.numel() * static_cast<std::int64_t>(size_)) {
    refuse("_allgather_base", "output: " + torch_name(output.scalar_type()) + " of " +
                                  std::to_string(output.numel()) + " elements; expected " +
                                  torch_name(input.scalar_type()) + " of " +
                                  std::to_string(input.numel() * size_) + " (the input's times " +
                                  std::to_string(size_) + " ranks)");
  }
  std::lock_guard lock(submit_);
  Comm& c = comm_for(input, "_allgather_base");
  Pending p{{c.allgather_async(in.data, output.data_ptr(), in.count, DType::kUInt8)},
            {},
            {input, output},
            make_work(c10d::OpType::_ALLGATHER_BASE, "dtrain:_all_gather_base", {output}, {input})};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  at::Tensor& out = only(outputs, "reduce_scatter");
  const Buffer b = reduced(out, "reduce_scatter", "output");
  const ReduceOp op = reduce_op(opts.reduceOp, "reduce_scatter");
  std::vector<at::Tensor>& ins = per_rank(inputs, size_, "reduce_scatter", "inputs");
  // torch's list of tensors is not one buffer: copied into one, reduced straight into `out`.
  at::Tensor flat = at::empty({static_cast<std::int64_t>(b.count) * size_}, out.options());
  const std::size_t bytes = bytes_of(out);
  auto* dst = static_cast<std::uint8_t*>(flat.data_ptr());
  for (std::size_t r = 0; r < ins.size(); ++r) {
    same_shape(out, ins[r], "reduce_scatter", ("inputs[" + std::to_string(r) + "]").c_str());
    reduced(ins[r], "reduce_scatter", "inputs[" + std::to_string(r) + "]");
    std::memcpy(dst + r * bytes, ins[r].data_ptr(), bytes);
  }
  std::lock_guard lock(submit_);
  Pending p{{comm().reduce_scatter_async(flat.data_ptr(), b.data, b.count, b.type, op)},
            {},
            {flat, out},
            make_work(c10d::OpType::REDUCE_SCATTER, "dtrain:reduce_scatter", outputs, ins)};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  const Buffer out = reduced(output, "_reduce_scatter_base", "output", Placement::kCpuOrCuda);
  const Buffer in = reduced(input, "_reduce_scatter_base", "input", Placement::kCpuOrCuda);
  same_device(output, input, "_reduce_scatter_base", "input");
  const ReduceOp op = reduce_op(opts.reduceOp, "_reduce_scatter_base");
  if (input.scalar_type() != output.scalar_type() ||
      input.numel() != output.numel() * static_cast<std::int64_t>(size_)) {
    refuse("_reduce_scatter_base", "input: " + torch_name(input.scalar_type()) + " of " +
                                       std::to_string(input.numel()) + " elements; expected " +
                                       torch_name(output.scalar_type()) + " of " +
                                       std::to_string(output.numel() * size_) +
                                       " (the output's times " + std::to_string(size_) + " ranks)");
  }
  std::lock_guard lock(submit_);
  Comm& c = comm_for(input, "_reduce_scatter_base");
  Pending p{{c.reduce_scatter_async(in.data, out.data, out.count, out.type, op)},
            {},
            {input, output},
            make_work(c10d::OpType::_REDUCE_SCATTER_BASE, "dtrain:_reduce_scatter_base", {output},
                      {input})};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::barrier(const c10d::BarrierOptions& /*opts*/) {
  // libdtrain's barrier is blocking only: it runs here, after everything submitted before it (the
  // engine runs collectives in order). Its Work completes after theirs, in the same queue.
  std::lock_guard lock(submit_);
  // Without the GIL, should a caller hold it: the wait is for the other ranks, through
  // libdtrain's progress thread.
  python::without_gil([this] { comm().barrier(); });
  return enqueue(Pending{{}, {}, {}, make_work(c10d::OpType::BARRIER, "dtrain:barrier", {}, {})});
}

}  // namespace dtrain::torch_backend
