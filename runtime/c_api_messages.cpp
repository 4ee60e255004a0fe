// The C ABI of point-to-point messages (dtrain.h: dtrain_send, dtrain_recv, dtrain_isend,
// dtrain_irecv, dtrain_work_source), through the same guard as the rest (c_api_guard.hpp).
#include "c_api_guard.hpp"

using namespace dtrain::c_api;

dtrain_status_t dtrain_send(dtrain_context_t* ctx, const void* buf, size_t count,
                            dtrain_dtype_t dtype, int dst, int tag) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_send", "ctx");
    ctx->ctx.comm().send(buf, count, to_dtype(dtype, "dtrain_send"), dst, tag);
  });
}

dtrain_status_t dtrain_recv(dtrain_context_t* ctx, void* buf, size_t count, dtrain_dtype_t dtype,
                            int src, int tag, int* source) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_recv", "ctx");
    const int from = ctx->ctx.comm().recv(buf, count, to_dtype(dtype, "dtrain_recv"), src, tag);
    if (source != nullptr) *source = from;
  });
}

dtrain_status_t dtrain_isend(dtrain_context_t* ctx, const void* buf, size_t count,
                             dtrain_dtype_t dtype, int dst, int tag,
                             dtrain_work_t** work) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_isend", "ctx");
    require(work, "dtrain_isend", "work");
    *work = nullptr;
    *work = new dtrain_work{
        ctx->ctx.comm().isend(buf, count, to_dtype(dtype, "dtrain_isend"), dst, tag)};
  });
}

dtrain_status_t dtrain_irecv(dtrain_context_t* ctx, void* buf, size_t count, dtrain_dtype_t dtype,
                             int src, int tag, dtrain_work_t** work) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_irecv", "ctx");
    require(work, "dtrain_irecv", "work");
    *work = nullptr;
    *work = new dtrain_work{
        ctx->ctx.comm().irecv(buf, count, to_dtype(dtype, "dtrain_irecv"), src, tag)};
  });
}

dtrain_status_t dtrain_work_source(dtrain_work_t* work, int* source) noexcept {
  return guarded([&] {
    require(work, "dtrain_work_source", "work");
    require(source, "dtrain_work_source", "source");
    *source = work->work.source();
  });
}
