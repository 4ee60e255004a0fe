// FusedAllreduce: many tensors, few collectives. Tensors of at least kDirectBytes are reduced in
// place (a large message already runs at full bandwidth; copying it would only add memory
// traffic). Smaller ones are grouped into buckets of at most bucket_bytes, and a bucket streams
// through one small staging buffer: pack a piece, reduce it, unpack it, next piece. The piece
// stays in cache from pack to unpack, so fusing costs about the memory traffic of reducing the
// tensors where they are, while the many small messages become few cache-sized ones. The whole
// run is one collective ("allreduce_fused") on the progress thread, under the deadline.
//
// Why not a pipeline (pack the next 64 MiB bucket on the caller's thread while the progress thread
// reduces this one), as an earlier version did: on 2 ranks x 2 cores it was 1.1-1.6x slower than
// one pre-packed MPI_Allreduce, because a 64 MiB bucket goes through memory twice more and the
// packing thread takes the core that the peer's MPI progress needs. Streaming 1 MiB pieces (the
// MPI communicator's own piece size) measured best against 2, 4 and 16 MiB (docs/benchmarks.md).
//
// When every rank is on one node the backend takes all tensors at once (allreduce_parts: the
// shared-memory allreduce copies them straight into its shared pieces and writes each result
// straight back), and buckets and staging are not used.
#include <algorithm>
#include <cstring>

#include "comm/algorithms/reduce.hpp"
#include "comm/call_arguments.hpp"
#include "comm/engine.hpp"
#include "dtrain/dtrain.hpp"

namespace dtrain {
namespace runtime {

// Below this a call's fixed cost (µs) is a noticeable share of its transfer time.
constexpr std::size_t kDirectBytes = std::size_t{1} << 20;
// The staging piece: small enough to stay in a core's L2 from pack to unpack, large enough that
// a collective's fixed cost is small against its transfer.
constexpr std::size_t kStageBytes = std::size_t{1} << 20;

struct FusionItem {
  // A direct tensor: one entry in `members` and `bucket` false.
  std::vector<FusedAllreduce::Tensor> members;
  bool bucket = false;
};

struct FusionPlan {
  std::vector<FusionItem> items;
  DType type{};
  ReduceOp op{};
  std::size_t elem = 0;
  std::size_t bytes = 0;  // all tensors
  std::size_t bucket_bytes = 0;
  std::size_t buckets = 0;
  std::vector<AllreducePart> parts;  // every tensor, in order, for backends that take them all
  std::vector<char> stage;           // kStageBytes, reused by every run
  // Where each part of the staged piece goes back to; kept across runs so a step allocates nothing.
  struct Slice {
    char* data;
    std::size_t bytes;
  };
  std::vector<Slice> slices;
};

namespace {

// Streams one bucket through the staging buffer, splitting tensors across pieces as needed
// (the reduction is elementwise, so where a piece ends does not matter).
void reduce_bucket(Communicator& backend, FusionPlan& plan, const FusionItem& bucket) {
  const std::size_t piece = plan.stage.size() / plan.elem;
  char* stage = plan.stage.data();
  auto& slices = plan.slices;  // what the current piece holds, in order
  slices.clear();
  std::size_t filled = 0;  // elements
  const auto flush = [&] {
    if (filled == 0) return;
    backend.allreduce(stage, stage, filled, plan.type, plan.op);
    const char* p = stage;
    for (const auto& s : slices) {
      std::memcpy(s.data, p, s.bytes);
      p += s.bytes;
    }
    slices.clear();
    filled = 0;
  };
  for (const auto& t : bucket.members) {
    char* data = static_cast<char*>(t.data);
    for (std::size_t done = 0; done < t.count;) {
      const std::size_t n = std::min(t.count - done, piece - filled);
      const std::size_t bytes = n * plan.elem;
      std::memcpy(stage + filled * plan.elem, data + done * plan.elem, bytes);
      slices.push_back({data + done * plan.elem, bytes});
      filled += n;
      done += n;
      if (filled == piece) flush();
    }
  }
  flush();
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
  plan.bucket_bytes = bucket_bytes != 0 ? bucket_bytes : comm.engine().settings().fusion_bytes;
  runtime::check_reduce(type, op, "allreduce_fused");
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
    plan.parts.push_back({t.data, t.data, t.count});
    if (bytes >= runtime::kDirectBytes || bytes >= plan.bucket_bytes) {
      plan.items.emplace_back().members.push_back(t);
      open = nullptr;  // keep order: later small tensors start a new bucket after this one
      continue;
    }
    if (open == nullptr || open_bytes + bytes > plan.bucket_bytes) {
      open = &plan.items.emplace_back();
      open->bucket = true;
      open_bytes = 0;
      ++plan.buckets;
    }
    open->members.push_back(t);
    open_bytes += bytes;
  }
  // Allocated, and its pages touched by value-initialization, once here.
  if (plan.buckets > 0) {
    const std::size_t stage = std::min(runtime::kStageBytes, plan.bucket_bytes);
    plan.stage.resize(std::max(plan.elem, stage / plan.elem * plan.elem));
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
  const auto body = [plan, &engine] {
    runtime::Communicator& backend = engine.backend();
    if (backend.allreduce_parts(plan->parts, plan->type, plan->op)) return;
    for (const auto& item : plan->items) {
      if (item.bucket) {
        runtime::reduce_bucket(backend, *plan, item);
      } else {
        const Tensor& t = item.members.front();
        backend.allreduce(t.data, t.data, t.count, plan->type, plan->op);
      }
    }
  };
  // Every piece is at most plan->bytes, so when that polls, the whole run does.
  const bool polls = engine.backend().allreduce_polls(plan->bytes, plan->type);
  if (engine.threaded() && polls && engine.run_inline("allreduce_fused", plan->bytes, body)) {
    return;
  }
  engine.run("allreduce_fused", plan->bytes, body, polls);
}

}  // namespace dtrain
