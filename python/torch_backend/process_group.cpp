#include "process_group.hpp"

#include <ATen/ATen.h>

#include <cstring>
#include <memory>
#include <utility>

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

at::Tensor& only(std::vector<at::Tensor>& tensors, std::string_view op) {
  if (tensors.size() != 1) {
    refuse(op, "tensors: " + std::to_string(tensors.size()) +
                   " tensors; expected 1 (one CPU tensor per call)");
  }
  return tensors[0];
}

void same_shape(const at::Tensor& a, const at::Tensor& b, std::string_view op, const char* what) {
  if (a.scalar_type() != b.scalar_type() || a.numel() != b.numel()) {
    refuse(op, std::string(what) + ": " + torch_name(b.scalar_type()) + " of " +
                   std::to_string(b.numel()) + " elements; expected " +
                   torch_name(a.scalar_type()) + " of " + std::to_string(a.numel()) +
                   " elements, like the input");
  }
}

// A list of one tensor per rank (allgather's outputs, reduce_scatter's inputs).
std::vector<at::Tensor>& per_rank(std::vector<std::vector<at::Tensor>>& lists, int size,
                                  std::string_view op, const char* what) {
  if (lists.size() != 1) {
    refuse(op, std::string(what) + ": " + std::to_string(lists.size()) +
                   " lists; expected 1 (one list of CPU tensors per call)");
  }
  if (lists[0].size() != static_cast<std::size_t>(size)) {
    refuse(op, std::string(what) + ": " + std::to_string(lists[0].size()) +
                   " tensors; expected one per rank, " + std::to_string(size));
  }
  return lists[0];
}

std::size_t bytes_of(const at::Tensor& t) {
  return static_cast<std::size_t>(t.numel()) * t.element_size();
}

}  // namespace

DtrainWork::DtrainWork(int rank, c10d::OpType type, const char* title,
                       std::vector<at::Tensor> outputs)
    : Work(rank, type, title),
      outputs_(std::move(outputs)),
      future_(
          c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {
}

bool DtrainWork::isCompleted() { return future_->completed(); }
bool DtrainWork::isSuccess() const { return future_->completed() && !future_->hasError(); }
std::exception_ptr DtrainWork::exception() const { return future_->exception_ptr(); }
std::vector<at::Tensor> DtrainWork::result() { return outputs_; }

bool DtrainWork::wait(std::chrono::milliseconds /*timeout*/) {
  future_->wait();
  if (future_->hasError()) std::rethrow_exception(future_->exception_ptr());
  return true;
}

void DtrainWork::complete() { future_->markCompleted(c10::IValue(outputs_)); }
void DtrainWork::fail(std::exception_ptr error) { future_->setError(std::move(error)); }

ProcessGroupDtrain::ProcessGroupDtrain(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                       int size)
    : ProcessGroup(rank, size),
      ctx_(dtrain::init(ExternalBootstrap{rank, size, std::make_shared<TorchStore>(store)})),
      completer_([this] { complete_in_order(); }) {
  init();  // c10d's own set-up (API usage logging), as every backend calls it
}

ProcessGroupDtrain::~ProcessGroupDtrain() {
  {
    std::lock_guard lock(queue_mutex_);
    stop_ = true;
  }
  queue_cv_.notify_all();
  // Waits for the collectives still queued: their buffers and the Context must outlive them.
  completer_.join();
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
  }
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::broadcast(std::vector<at::Tensor>& tensors,
                                                             const c10d::BroadcastOptions& opts) {
  at::Tensor& t = only(tensors, "broadcast");
  const Buffer b = moved(t, "broadcast", "tensor");
  std::lock_guard lock(submit_);
  Pending p{
      {comm().broadcast_async(b.data, b.count, b.type, static_cast<int>(opts.rootRank))},
      {},
      {t},
      c10::make_intrusive<DtrainWork>(rank_, c10d::OpType::BROADCAST, "dtrain:broadcast", tensors)};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::allreduce(std::vector<at::Tensor>& tensors,
                                                             const c10d::AllreduceOptions& opts) {
  at::Tensor& t = only(tensors, "allreduce");
  const Buffer b = reduced(t, "allreduce", "tensor");
  const ReduceOp op = reduce_op(opts.reduceOp, "allreduce");
  std::lock_guard lock(submit_);
  Pending p{{comm().allreduce_async(b.data, b.data, b.count, b.type, op)},
            {},
            {t},
            c10::make_intrusive<DtrainWork>(rank_, c10d::OpType::ALLREDUCE, "dtrain:all_reduce",
                                            tensors)};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  const ReduceOp op = reduce_op(opts.reduceOp, "allreduce_coalesced");
  std::vector<Buffer> buffers;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    buffers.push_back(
        reduced(tensors[i], "allreduce_coalesced", "tensors[" + std::to_string(i) + "]"));
  }
  std::lock_guard lock(submit_);
  Pending p{{},
            {},
            tensors,
            c10::make_intrusive<DtrainWork>(rank_, c10d::OpType::ALLREDUCE_COALESCED,
                                            "dtrain:allreduce_coalesced", tensors)};
  for (const Buffer& b : buffers)
    p.works.push_back(comm().allreduce_async(b.data, b.data, b.count, b.type, op));
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::reduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::ReduceOptions& opts) {
  // An allreduce whose result only the root keeps: the others reduce into scratch, so their
  // tensor is left as it was (as gloo leaves it).
  at::Tensor& t = only(tensors, "reduce");
  const Buffer b = reduced(t, "reduce", "tensor");
  const ReduceOp op = reduce_op(opts.reduceOp, "reduce");
  if (opts.rootRank < 0 || opts.rootRank >= size_) {
    refuse("reduce", "root " + std::to_string(opts.rootRank) + "; expected a rank from 0 to " +
                         std::to_string(size_ - 1));
  }
  const bool root = opts.rootRank == rank_;
  at::Tensor out = root ? t : at::empty_like(t);
  std::lock_guard lock(submit_);
  Pending p{{comm().allreduce_async(b.data, out.data_ptr(), b.count, b.type, op)},
            {},
            {t, out},
            c10::make_intrusive<DtrainWork>(rank_, c10d::OpType::REDUCE, "dtrain:reduce", tensors)};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& /*opts*/) {
  at::Tensor& in = only(inputs, "allgather");
  const Buffer b = moved(in, "allgather", "input");
  std::vector<at::Tensor>& outs = per_rank(outputs, size_, "allgather", "outputs");
  for (std::size_t r = 0; r < outs.size(); ++r) {
    same_shape(in, outs[r], "allgather", ("outputs[" + std::to_string(r) + "]").c_str());
    moved(outs[r], "allgather", "outputs[" + std::to_string(r) + "]");
  }
  // torch's list of tensors is not one buffer: gather into one, then copy each block out.
  at::Tensor flat = at::empty({static_cast<std::int64_t>(b.count) * size_}, at::kByte);
  std::lock_guard lock(submit_);
  Pending p{
      {comm().allgather_async(b.data, flat.data_ptr(), b.count, DType::kUInt8)},
      [outs, flat, bytes = b.count] {
        const auto* src = static_cast<const std::uint8_t*>(flat.data_ptr());
        for (std::size_t r = 0; r < outs.size(); ++r)
          std::memcpy(outs[r].data_ptr(), src + r * bytes, bytes);
      },
      {in, flat},
      c10::make_intrusive<DtrainWork>(rank_, c10d::OpType::ALLGATHER, "dtrain:all_gather", outs)};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::_allgather_base(
    at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& /*opts*/) {
  const Buffer in = moved(input, "_allgather_base", "input");
  moved(output, "_allgather_base", "output");
  if (output.scalar_type() != input.scalar_type() ||
      output.numel() != input.numel() * static_cast<std::int64_t>(size_)) {
    refuse("_allgather_base", "output: " + torch_name(output.scalar_type()) + " of " +
                                  std::to_string(output.numel()) + " elements; expected " +
                                  torch_name(input.scalar_type()) + " of " +
                                  std::to_string(input.numel() * size_) + " (the input's times " +
                                  std::to_string(size_) + " ranks)");
  }
  std::lock_guard lock(submit_);
  Pending p{
      {comm().allgather_async(in.data, output.data_ptr(), in.count, DType::kUInt8)},
      {},
      {input, output},
      c10::make_intrusive<DtrainWork>(rank_, c10d::OpType::_ALLGATHER_BASE,
                                      "dtrain:_all_gather_base", std::vector<at::Tensor>{output})};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::gather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& opts) {
  // An allgather whose blocks only the root copies out: exact, at the cost of every rank
  // receiving them.
  at::Tensor& in = only(inputs, "gather");
  const Buffer b = moved(in, "gather", "input");
  if (opts.rootRank < 0 || opts.rootRank >= size_) {
    refuse("gather", "root " + std::to_string(opts.rootRank) + "; expected a rank from 0 to " +
                         std::to_string(size_ - 1));
  }
  std::vector<at::Tensor> outs;
  if (opts.rootRank == rank_) {
    outs = per_rank(outputs, size_, "gather", "outputs");
    for (std::size_t r = 0; r < outs.size(); ++r) {
      same_shape(in, outs[r], "gather", ("outputs[" + std::to_string(r) + "]").c_str());
      moved(outs[r], "gather", "outputs[" + std::to_string(r) + "]");
    }
  }
  at::Tensor flat = at::empty({static_cast<std::int64_t>(b.count) * size_}, at::kByte);
  std::lock_guard lock(submit_);
  Pending p{{comm().allgather_async(b.data, flat.data_ptr(), b.count, DType::kUInt8)},
            [outs, flat, bytes = b.count] {
              const auto* src = static_cast<const std::uint8_t*>(flat.data_ptr());
              for (std::size_t r = 0; r < outs.size(); ++r)
                std::memcpy(outs[r].data_ptr(), src + r * bytes, bytes);
            },
            {in, flat},
            c10::make_intrusive<DtrainWork>(rank_, c10d::OpType::GATHER, "dtrain:gather", outs)};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  // The root's blocks broadcast as one buffer, each rank keeping its own: exact, at the cost of
  // every rank receiving all of them.
  at::Tensor& out = only(outputs, "scatter");
  const Buffer b = moved(out, "scatter", "output");
  if (opts.rootRank < 0 || opts.rootRank >= size_) {
    refuse("scatter", "root " + std::to_string(opts.rootRank) + "; expected a rank from 0 to " +
                          std::to_string(size_ - 1));
  }
  at::Tensor flat = at::empty({static_cast<std::int64_t>(b.count) * size_}, at::kByte);
  if (opts.rootRank == rank_) {
    std::vector<at::Tensor>& ins = per_rank(inputs, size_, "scatter", "inputs");
    auto* dst = static_cast<std::uint8_t*>(flat.data_ptr());
    for (std::size_t r = 0; r < ins.size(); ++r) {
      same_shape(out, ins[r], "scatter", ("inputs[" + std::to_string(r) + "]").c_str());
      moved(ins[r], "scatter", "inputs[" + std::to_string(r) + "]");
      std::memcpy(dst + r * b.count, ins[r].data_ptr(), b.count);
    }
  }
  std::lock_guard lock(submit_);
  Pending p{
      {comm().broadcast_async(flat.data_ptr(), flat.numel(), DType::kUInt8,
                              static_cast<int>(opts.rootRank))},
      [out, flat, bytes = b.count, rank = rank_] {
        std::memcpy(out.data_ptr(),
                    static_cast<const std::uint8_t*>(flat.data_ptr()) +
                        static_cast<std::size_t>(rank) * bytes,
                    bytes);
      },
      {flat},
      c10::make_intrusive<DtrainWork>(rank_, c10d::OpType::SCATTER, "dtrain:scatter", outputs)};
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
            c10::make_intrusive<DtrainWork>(rank_, c10d::OpType::REDUCE_SCATTER,
                                            "dtrain:reduce_scatter", outputs)};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  const Buffer out = reduced(output, "_reduce_scatter_base", "output");
  const Buffer in = reduced(input, "_reduce_scatter_base", "input");
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
  Pending p{{comm().reduce_scatter_async(in.data, out.data, out.count, out.type, op)},
            {},
            {input, output},
            c10::make_intrusive<DtrainWork>(rank_, c10d::OpType::_REDUCE_SCATTER_BASE,
                                            "dtrain:_reduce_scatter_base",
                                            std::vector<at::Tensor>{output})};
  return enqueue(std::move(p));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDtrain::barrier(const c10d::BarrierOptions& /*opts*/) {
  // libdtrain's barrier is blocking only: it runs here, after everything submitted before it (the
  // engine runs collectives in order). Its Work completes after theirs, in the same queue.
  std::lock_guard lock(submit_);
  comm().barrier();
  return enqueue(
      Pending{{},
              {},
              {},
              c10::make_intrusive<DtrainWork>(rank_, c10d::OpType::BARRIER, "dtrain:barrier",
                                              std::vector<at::Tensor>{})});
}

}  // namespace dtrain::torch_backend
