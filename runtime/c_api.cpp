// The C ABI (dtrain.h): the only extern "C" definitions of libdtrain. Every function is noexcept
// and runs its body through one guard that maps exceptions to status codes and keeps the message
// for dtrain_last_error(), so no exception ever unwinds into C.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "c_api_guard.hpp"
#include "dtrain/dtrain.h"
#include "dtrain/dtrain.hpp"

using namespace dtrain::c_api;

namespace {

// One int of a handle, read by `pick`: the group's rank and size on a group's handle, the node's
// facts (local rank, local size, attempt) the same on either.
template <typename Pick>
dtrain_status_t field(const dtrain_context_t* ctx, int* out, const char* function,
                      Pick pick) noexcept {
  return guarded([&] {
    require(ctx, function, "ctx");
    require(out, function, "out");
    *out = pick(*ctx);
  });
}

template <typename T>
dtrain_status_t allreduce(dtrain_context_t* ctx, const T* in, T* out, size_t count,
                          dtrain_reduce_op_t op, const char* function) noexcept {
  return guarded([&] {
    require(ctx, function, "ctx");
    ctx->comm().allreduce(in, out, count, dtrain::dtype_of<T>(), to_op(op, function));
  });
}

// dtrain_subgroup and dtrain_subgroup_numbered: Comm::subgroup, its number and timeout checked
// there (GroupIds: the number's range and repeats).
dtrain_status_t subgroup(dtrain_context_t* ctx, const int* ranks, size_t n,
                         std::optional<std::int64_t> number, std::int64_t timeout_ms,
                         dtrain_context_t** out, const char* function) noexcept {
  return guarded([&] {
    require(ctx, function, "ctx");
    require(out, function, "out");
    *out = nullptr;
    if (n > 0) require(ranks, function, "ranks");
    if (timeout_ms < 0) {
      throw dtrain::Error(dtrain::Error::Code::kInvalid,
                          std::string("dtrain: ") + function +
                              ": timeout_ms; expected 0 (the job's deadline) or more, got " +
                              std::to_string(timeout_ms));
    }
    std::optional<std::chrono::milliseconds> timeout;
    if (timeout_ms > 0) timeout = std::chrono::milliseconds(timeout_ms);
    std::optional<dtrain::Comm> g = ctx->comm().subgroup({ranks, n}, timeout, number);
    if (g) *out = new dtrain_context{nullptr, ctx->context, std::move(g)};
  });
}

}  // namespace

extern "C" {

dtrain_status_t dtrain_init(dtrain_context_t** out) noexcept {
  return guarded([&] {
    require(out, "dtrain_init", "out");
    *out = nullptr;
    auto handle = std::make_unique<dtrain_context>();
    handle->owned = std::make_unique<dtrain::Context>(dtrain::init());
    handle->context = handle->owned.get();
    *out = handle.release();
  });
}

dtrain_status_t dtrain_finalize(dtrain_context_t* ctx) noexcept {
  return guarded([&] {
    if (ctx == nullptr) return;
    (void)world_context(ctx, "dtrain_finalize");  // a group's: dtrain_group_free
    delete ctx;
  });
}

dtrain_status_t dtrain_abort(dtrain_context_t* ctx, const char* reason) noexcept {
  return guarded([&] {
    if (ctx != nullptr) {
      ctx->context->abort(reason != nullptr ? reason : "dtrain_abort() was called");
    }
  });
}

dtrain_status_t dtrain_rank(const dtrain_context_t* ctx, int* out) noexcept {
  return field(ctx, out, "dtrain_rank", [](const dtrain_context& h) { return h.comm().rank(); });
}

dtrain_status_t dtrain_size(const dtrain_context_t* ctx, int* out) noexcept {
  return field(ctx, out, "dtrain_size", [](const dtrain_context& h) { return h.comm().size(); });
}

dtrain_status_t dtrain_split(dtrain_context_t* ctx, int color, int key,
                             dtrain_context_t** out) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_split", "ctx");
    require(out, "dtrain_split", "out");
    *out = nullptr;
    static_assert(DTRAIN_NO_GROUP == dtrain::Comm::kNoGroup);
    std::optional<dtrain::Comm> g = ctx->comm().split(color, key);
    if (g) *out = new dtrain_context{nullptr, ctx->context, std::move(g)};
  });
}

dtrain_status_t dtrain_subgroup(dtrain_context_t* ctx, const int* ranks, size_t n,
                                dtrain_context_t** out) noexcept {
  return subgroup(ctx, ranks, n, std::nullopt, 0, out, "dtrain_subgroup");
}

dtrain_status_t dtrain_subgroup_numbered(dtrain_context_t* ctx, const int* ranks, size_t n,
                                         int64_t number, int64_t timeout_ms,
                                         dtrain_context_t** out) noexcept {
  return subgroup(ctx, ranks, n, number, timeout_ms, out, "dtrain_subgroup_numbered");
}

dtrain_status_t dtrain_group_free(dtrain_context_t* group) noexcept {
  return guarded([&] {
    if (group == nullptr) return;
    if (!group->group) {
      throw dtrain::Error(dtrain::Error::Code::kInvalid,
                          "dtrain: dtrain_group_free: group is dtrain_init's handle; expected a "
                          "group's (dtrain_split, dtrain_subgroup): end the job's with "
                          "dtrain_finalize");
    }
    delete group;
  });
}

dtrain_status_t dtrain_local_rank(const dtrain_context_t* ctx, int* out) noexcept {
  return field(ctx, out, "dtrain_local_rank",
               [](const dtrain_context& h) { return h.context->world().local_rank; });
}

dtrain_status_t dtrain_local_size(const dtrain_context_t* ctx, int* out) noexcept {
  return field(ctx, out, "dtrain_local_size",
               [](const dtrain_context& h) { return h.context->world().local_size; });
}

dtrain_status_t dtrain_attempt(const dtrain_context_t* ctx, int* out) noexcept {
  return field(ctx, out, "dtrain_attempt",
               [](const dtrain_context& h) { return h.context->world().attempt; });
}

dtrain_status_t dtrain_allreduce_float(dtrain_context_t* ctx, const float* in, float* out,
                                       size_t count, dtrain_reduce_op_t op) noexcept {
  return allreduce(ctx, in, out, count, op, "dtrain_allreduce_float");
}

dtrain_status_t dtrain_allreduce_double(dtrain_context_t* ctx, const double* in, double* out,
                                        size_t count, dtrain_reduce_op_t op) noexcept {
  return allreduce(ctx, in, out, count, op, "dtrain_allreduce_double");
}

dtrain_status_t dtrain_barrier(dtrain_context_t* ctx) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_barrier", "ctx");
    ctx->comm().barrier();
  });
}

dtrain_status_t dtrain_allreduce(dtrain_context_t* ctx, const void* in, void* out, size_t count,
                                 dtrain_dtype_t dtype, dtrain_reduce_op_t op) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_allreduce", "ctx");
    ctx->comm().allreduce(in, out, count, to_dtype(dtype, "dtrain_allreduce"),
                          to_op(op, "dtrain_allreduce"));
  });
}

dtrain_status_t dtrain_broadcast(dtrain_context_t* ctx, void* buf, size_t count,
                                 dtrain_dtype_t dtype, int root) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_broadcast", "ctx");
    ctx->comm().broadcast(buf, count, to_dtype(dtype, "dtrain_broadcast"), root);
  });
}

dtrain_status_t dtrain_allgather(dtrain_context_t* ctx, const void* in, void* out, size_t count,
                                 dtrain_dtype_t dtype) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_allgather", "ctx");
    ctx->comm().allgather(in, out, count, to_dtype(dtype, "dtrain_allgather"));
  });
}

dtrain_status_t dtrain_reduce_scatter(dtrain_context_t* ctx, const void* in, void* out,
                                      size_t count, dtrain_dtype_t dtype,
                                      dtrain_reduce_op_t op) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_reduce_scatter", "ctx");
    ctx->comm().reduce_scatter(in, out, count, to_dtype(dtype, "dtrain_reduce_scatter"),
                               to_op(op, "dtrain_reduce_scatter"));
  });
}

dtrain_status_t dtrain_allreduce_async(dtrain_context_t* ctx, const void* in, void* out,
                                       size_t count, dtrain_dtype_t dtype, dtrain_reduce_op_t op,
                                       dtrain_work_t** work) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_allreduce_async", "ctx");
    require(work, "dtrain_allreduce_async", "work");
    *work = nullptr;
    *work = new dtrain_work{ctx->comm().allreduce_async(in, out, count,
                                                        to_dtype(dtype, "dtrain_allreduce_async"),
                                                        to_op(op, "dtrain_allreduce_async"))};
  });
}

dtrain_status_t dtrain_work_wait(dtrain_work_t* work) noexcept {
  return guarded([&] {
    require(work, "dtrain_work_wait", "work");
    work->work.wait();
  });
}

dtrain_status_t dtrain_work_test(dtrain_work_t* work, int* done) noexcept {
  return guarded([&] {
    require(work, "dtrain_work_test", "work");
    require(done, "dtrain_work_test", "done");
    *done = work->work.test() ? 1 : 0;
  });
}

dtrain_status_t dtrain_work_free(dtrain_work_t* work) noexcept {
  return guarded([&] { delete work; });
}

dtrain_status_t dtrain_fused_create(dtrain_context_t* ctx, void* const* data, const size_t* counts,
                                    size_t n, dtrain_dtype_t dtype, dtrain_reduce_op_t op,
                                    size_t bucket_bytes, dtrain_fused_t** out) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_fused_create", "ctx");
    require(out, "dtrain_fused_create", "out");
    *out = nullptr;
    if (n > 0) {
      require(data, "dtrain_fused_create", "data");
      require(counts, "dtrain_fused_create", "counts");
    }
    std::vector<dtrain::FusedAllreduce::Tensor> tensors(n);
    for (size_t i = 0; i < n; ++i) tensors[i] = {data[i], counts[i]};
    *out = new dtrain_fused{dtrain::FusedAllreduce(ctx->comm(), std::move(tensors),
                                                   to_dtype(dtype, "dtrain_fused_create"),
                                                   to_op(op, "dtrain_fused_create"), bucket_bytes)};
  });
}

dtrain_status_t dtrain_fused_run(dtrain_fused_t* fused) noexcept {
  return guarded([&] {
    require(fused, "dtrain_fused_run", "fused");
    fused->fused.run();
  });
}

dtrain_status_t dtrain_fused_free(dtrain_fused_t* fused) noexcept {
  return guarded([&] { delete fused; });
}

// ---- Shard, Checkpointer, Preemption ----

struct dtrain_shard {
  dtrain::Shard shard;
};
struct dtrain_checkpointer {
  dtrain::Checkpointer ckpt;
};
struct dtrain_checkpoint {
  dtrain::Checkpoint c;
};
struct dtrain_preemption {
  dtrain::Preemption p;
};

dtrain_status_t dtrain_shard_create(uint64_t num_samples, int rank, int world, int shuffle,
                                    uint64_t seed, dtrain_shard_tail_t tail,
                                    dtrain_shard_t** out) noexcept {
  return guarded([&] {
    require(out, "dtrain_shard_create", "out");
    *out = nullptr;
    dtrain::ShardTail t;
    switch (static_cast<int>(tail)) {
      case DTRAIN_SHARD_PAD:
        t = dtrain::ShardTail::kPad;
        break;
      case DTRAIN_SHARD_DROP:
        t = dtrain::ShardTail::kDrop;
        break;
      case DTRAIN_SHARD_EXACT_ONCE:
        t = dtrain::ShardTail::kExactOnce;
        break;
      default:
        throw dtrain::Error(dtrain::Error::Code::kInvalid,
                            "dtrain: dtrain_shard_create: unknown tail; expected DTRAIN_SHARD_PAD, "
                            "DTRAIN_SHARD_DROP or DTRAIN_SHARD_EXACT_ONCE, got " +
                                std::to_string(static_cast<int>(tail)));
    }
    *out = new dtrain_shard{dtrain::Shard(num_samples, rank, world, {shuffle != 0, seed, t})};
  });
}

dtrain_status_t dtrain_shard_size(const dtrain_shard_t* shard, uint64_t* out) noexcept {
  return guarded([&] {
    require(shard, "dtrain_shard_size", "shard");
    require(out, "dtrain_shard_size", "out");
    *out = shard->shard.size();
  });
}

dtrain_status_t dtrain_shard_indices(const dtrain_shard_t* shard, uint64_t epoch, uint64_t consumed,
                                     uint64_t* out, size_t capacity, size_t* written) noexcept {
  return guarded([&] {
    require(shard, "dtrain_shard_indices", "shard");
    require(written, "dtrain_shard_indices", "written");
    *written = 0;
    const auto indices = shard->shard.indices(epoch, consumed);
    if (indices.size() > capacity) {
      throw dtrain::Error(dtrain::Error::Code::kInvalid,
                          "dtrain: dtrain_shard_indices: capacity; expected at least " +
                              std::to_string(indices.size()) + " entries, got " +
                              std::to_string(capacity));
    }
    if (!indices.empty()) require(out, "dtrain_shard_indices", "out");
    std::copy(indices.begin(), indices.end(), out);
    *written = indices.size();
  });
}

dtrain_status_t dtrain_shard_free(dtrain_shard_t* shard) noexcept {
  return guarded([&] { delete shard; });
}

dtrain_status_t dtrain_checkpointer_create(dtrain_context_t* ctx, const char* dir, int keep,
                                           dtrain_checkpointer_t** out) noexcept {
  return dtrain_checkpointer_create_with_flags(ctx, dir, keep, 0, out);
}

dtrain_status_t dtrain_checkpointer_create_with_flags(dtrain_context_t* ctx, const char* dir,
                                                      int keep, unsigned flags,
                                                      dtrain_checkpointer_t** out) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_checkpointer_create", "ctx");
    require(dir, "dtrain_checkpointer_create", "dir");
    require(out, "dtrain_checkpointer_create", "out");
    *out = nullptr;
    if ((flags & ~DTRAIN_CHECKPOINT_DISCARD_NEWER) != 0) {
      throw dtrain::Error(dtrain::Error::Code::kInvalid,
                          "dtrain: dtrain_checkpointer_create_with_flags: flags; expected 0 or "
                          "DTRAIN_CHECKPOINT_DISCARD_NEWER, got " +
                              std::to_string(flags));
    }
    dtrain::CheckpointOptions options;
    options.keep = keep;
    options.discard_newer = (flags & DTRAIN_CHECKPOINT_DISCARD_NEWER) != 0;
    *out = new dtrain_checkpointer{
        dtrain::Checkpointer(world_context(ctx, "dtrain_checkpointer_create"), dir, options)};
  });
}

dtrain_status_t dtrain_checkpointer_save(dtrain_checkpointer_t* ckpt, int64_t step,
                                         const void* data, size_t size, const void* rank_data,
                                         size_t rank_size) noexcept {
  return guarded([&] {
    require(ckpt, "dtrain_checkpointer_save", "ckpt");
    if (size > 0) require(data, "dtrain_checkpointer_save", "data");
    if (rank_size > 0) require(rank_data, "dtrain_checkpointer_save", "rank_data");
    ckpt->ckpt.save(step, {static_cast<const std::byte*>(data), size},
                    {static_cast<const std::byte*>(rank_data), rank_size});
  });
}

dtrain_status_t dtrain_checkpointer_load_latest(dtrain_checkpointer_t* ckpt,
                                                dtrain_checkpoint_t** out) noexcept {
  return guarded([&] {
    require(ckpt, "dtrain_checkpointer_load_latest", "ckpt");
    require(out, "dtrain_checkpointer_load_latest", "out");
    *out = nullptr;
    if (auto c = ckpt->ckpt.load_latest()) *out = new dtrain_checkpoint{std::move(*c)};
  });
}

dtrain_status_t dtrain_checkpointer_free(dtrain_checkpointer_t* ckpt) noexcept {
  return guarded([&] { delete ckpt; });
}

dtrain_status_t dtrain_checkpoint_step(const dtrain_checkpoint_t* c, int64_t* out) noexcept {
  return guarded([&] {
    require(c, "dtrain_checkpoint_step", "c");
    require(out, "dtrain_checkpoint_step", "out");
    *out = c->c.step;
  });
}

dtrain_status_t dtrain_checkpoint_data(const dtrain_checkpoint_t* c, const void** data,
                                       size_t* size) noexcept {
  return guarded([&] {
    require(c, "dtrain_checkpoint_data", "c");
    require(data, "dtrain_checkpoint_data", "data");
    require(size, "dtrain_checkpoint_data", "size");
    *data = c->c.data.data();
    *size = c->c.data.size();
  });
}

dtrain_status_t dtrain_checkpoint_rank_data(const dtrain_checkpoint_t* c, const void** data,
                                            size_t* size) noexcept {
  return guarded([&] {
    require(c, "dtrain_checkpoint_rank_data", "c");
    require(data, "dtrain_checkpoint_rank_data", "data");
    require(size, "dtrain_checkpoint_rank_data", "size");
    *data = c->c.rank_data.data();
    *size = c->c.rank_data.size();
  });
}

dtrain_status_t dtrain_checkpoint_free(dtrain_checkpoint_t* c) noexcept {
  return guarded([&] { delete c; });
}

dtrain_status_t dtrain_preemption_create(dtrain_context_t* ctx,
                                         dtrain_preemption_t** out) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_preemption_create", "ctx");
    require(out, "dtrain_preemption_create", "out");
    *out = nullptr;
    *out =
        new dtrain_preemption{dtrain::Preemption(world_context(ctx, "dtrain_preemption_create"))};
  });
}

dtrain_status_t dtrain_preemption_should_stop(dtrain_preemption_t* p, int* stop) noexcept {
  return guarded([&] {
    require(p, "dtrain_preemption_should_stop", "p");
    require(stop, "dtrain_preemption_should_stop", "stop");
    *stop = p->p.should_stop() ? 1 : 0;
  });
}

dtrain_status_t dtrain_preemption_free(dtrain_preemption_t* p) noexcept {
  return guarded([&] { delete p; });
}

const char* dtrain_last_error(void) noexcept { return last_error.c_str(); }

}  // extern "C"
