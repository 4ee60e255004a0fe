// FusedAllreduce: many tensors, few collectives. Tensors of at least kDirectBytes are reduced in
// place (a large message already runs at full bandwidth; copying it would only add memory
// traffic). Smaller ones are packed into persistent buckets, and while the progress thread
// reduces one bucket the caller packs the next and unpacks the previous: one pipeline, one
// collective ("allreduce_fused") per run().
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "comm/engine.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain {
namespace runtime {

// Below this a call's fixed cost (µs) is a noticeable share of its transfer time.
constexpr std::size_t kDirectBytes = std::size_t{1} << 20;
constexpr std::size_t kDefaultBucketBytes = std::size_t{64} << 20;

struct FusionItem {
  // A direct tensor: one entry in `members`, `buffer` empty.
  std::vector<FusedAllreduce::Tensor> members;
  std::vector<char> buffer;
  std::size_t count = 0;      // elements in the bucket
  std::atomic<int> stage{0};  // 0 to pack, 1 packed, 2 reduced
  FusionItem() = default;
  FusionItem(FusionItem&& o) noexcept
      : members(std::move(o.members)), buffer(std::move(o.buffer)), count(o.count) {}
};

struct FusionPlan {
  std::vector<FusionItem> items;
  DType type{};
  ReduceOp op{};
  std::size_t elem = 0;
  std::size_t bytes = 0;  // all tensors
  std::size_t bucket_bytes = 0;
  std::size_t buckets = 0;
};

namespace {

std::size_t fusion_bytes_from_env() {
  const char* v = std::getenv("DTRAIN_FUSION_BYTES");
  if (v == nullptr || *v == '\0') return kDefaultBucketBytes;
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (*end != '\0' || errno != 0 || n < 1024 || *v == '-') {
    throw Error(Error::Code::kInvalid,
                std::string("dtrain: DTRAIN_FUSION_BYTES: expected a byte count of at least "
                            "1024, got \"") +
                    v + "\"");
  }
  return static_cast<std::size_t>(n);
}

// Waits until `stage` reaches `want`: polls briefly, then sleeps in short steps so that the
// other side of the pipeline (and the peer rank, on a small machine) keeps the CPU.
// `check` runs every ~10 ms and may throw (the deadline).
template <typename Check>
void wait_stage(const std::atomic<int>& stage, int want, Check&& check) {
  const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
  while (stage.load(std::memory_order_acquire) < want) {
    if (std::chrono::steady_clock::now() < spin_until) {
      std::this_thread::yield();
      continue;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    static thread_local int polls = 0;
    if (++polls % 500 == 0 && check()) return;
  }
}

void pack(FusionItem& b, std::size_t elem) {
  char* p = b.buffer.data();
  for (const auto& t : b.members) {
    std::memcpy(p, t.data, t.count * elem);
    p += t.count * elem;
  }
}

void unpack(FusionItem& b, std::size_t elem) {
  const char* p = b.buffer.data();
  for (const auto& t : b.members) {
    std::memcpy(t.data, p, t.count * elem);
    p += t.count * elem;
  }
}

}  // namespace
}  // namespace runtime

FusedAllreduce::FusedAllreduce(Comm& comm, std::vector<Tensor> tensors, DType type, ReduceOp op,
                               std::size_t bucket_bytes)
    : comm_(&comm), plan_(std::make_unique<runtime::FusionPlan>()) {
  runtime::FusionPlan& plan = *plan_;
  plan.type = type;
  plan.op = op;
  plan.elem = dtype_size(type);
  plan.bucket_bytes = bucket_bytes != 0 ? bucket_bytes : runtime::fusion_bytes_from_env();
  if (op == ReduceOp::kAvg && !runtime::is_floating(type)) {
    throw Error(Error::Code::kInvalid,
                "dtrain: allreduce_fused: kAvg is defined for floating types; expected float32, "
                "float64, float16 or bfloat16 (or kSum), got " +
                    std::string(to_string(type)));
  }
  if (comm.backend() == "nccl") {
    // Packing is a host memcpy; device buffers would need the stream's copies.
    throw Error(Error::Code::kInvalid,
                "dtrain: allreduce_fused: host-memory communicators only; expected ctx.comm(), "
                "got the NCCL device communicator (allreduce device tensors one by one)");
  }
  runtime::FusionItem* open = nullptr;
  std::size_t open_bytes = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.data == nullptr && t.count > 0) {
      throw Error(Error::Code::kInvalid, "dtrain: allreduce_fused: tensor " + std::to_string(i) +
                                             "; expected a pointer to " + std::to_string(t.count) +
                                             " elements, got null");
    }
    if (t.count == 0) continue;
    const std::size_t bytes = t.count * plan.elem;
    plan.bytes += bytes;
    if (bytes >= runtime::kDirectBytes || bytes >= plan.bucket_bytes) {
      plan.items.emplace_back().members.push_back(t);
      open = nullptr;  // keep order: later small tensors start a new bucket after this one
      continue;
    }
    if (open == nullptr || open_bytes + bytes > plan.bucket_bytes) {
      open = &plan.items.emplace_back();
      open_bytes = 0;
      ++plan.buckets;
    }
    open->members.push_back(t);
    open->count += t.count;
    open_bytes += bytes;
  }
  // Buffers are allocated (and their pages touched, by value-initialization) once, here.
  for (auto& item : plan.items) {
    if (item.count > 0) item.buffer.resize(item.count * plan.elem);
  }
}

FusedAllreduce::FusedAllreduce(FusedAllreduce&&) noexcept = default;
FusedAllreduce& FusedAllreduce::operator=(FusedAllreduce&&) noexcept = default;
FusedAllreduce::~FusedAllreduce() = default;

std::size_t FusedAllreduce::bucket_count() const { return plan_->buckets; }
std::size_t FusedAllreduce::bucket_bytes() const { return plan_->bucket_bytes; }

void FusedAllreduce::run() {
  runtime::FusionPlan* plan = plan_.get();
  runtime::Engine& engine = comm_->engine();
  for (auto& item : plan->items) item.stage.store(0, std::memory_order_relaxed);
  const bool pipelined = engine.threaded();
  if (!pipelined) {
    // submit() runs the body inline here: everything must be packed before.
    for (auto& item : plan->items) {
      if (item.count == 0) continue;
      runtime::pack(item, plan->elem);
      item.stage.store(1, std::memory_order_release);
    }
  }
  auto pending = engine.submit("allreduce_fused", plan->bytes, [plan, &engine] {
    runtime::Communicator& backend = engine.backend();
    for (auto& item : plan->items) {
      if (item.count == 0) {
        const Tensor& t = item.members.front();
        backend.allreduce(t.data, t.data, t.count, plan->type, plan->op);
      } else {
        // Packing is memory-bound and finite: no deadline needed on this side.
        runtime::wait_stage(item.stage, 1, [] { return false; });
        backend.allreduce(item.buffer.data(), item.buffer.data(), item.count, plan->type, plan->op);
      }
      item.stage.store(2, std::memory_order_release);
    }
  });
  if (!pipelined) {
    engine.wait(*pending);
    for (auto& item : plan->items)
      if (item.count > 0) runtime::unpack(item, plan->elem);
    return;
  }
  for (auto& item : plan->items) {
    if (item.count == 0) continue;
    runtime::pack(item, plan->elem);
    item.stage.store(1, std::memory_order_release);
  }
  for (auto& item : plan->items) {
    if (item.count == 0) continue;
    // Returns early when the collective ended (its error is rethrown by test()), and throws the
    // timeout when the running collective is overdue.
    runtime::wait_stage(item.stage, 2, [&] {
      engine.check_overdue();
      return engine.test(*pending);
    });
    runtime::unpack(item, plan->elem);
  }
  engine.wait(*pending);
}

}  // namespace dtrain
