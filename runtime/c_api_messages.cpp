// The C ABI of point-to-point messages (dtrain.h: dtrain_send, dtrain_recv, dtrain_isend,
// dtrain_irecv, dtrain_work_source) and the collectives built on them (dtrain_gather, _scatter,
// _reduce, _alltoall, _alltoallv), through the same guard as the rest (c_api_guard.hpp).
#include <cstddef>
#include <utility>

#include "c_api_guard.hpp"

using namespace dtrain::c_api;

dtrain_status_t dtrain_send(dtrain_context_t* ctx, const void* buf, size_t count,
                            dtrain_dtype_t dtype, int dst, int tag) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_send", "ctx");
    ctx->comm().send(buf, count, to_dtype(dtype, "dtrain_send"), dst, tag);
  });
}

dtrain_status_t dtrain_recv(dtrain_context_t* ctx, void* buf, size_t count, dtrain_dtype_t dtype,
                            int src, int tag, int* source) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_recv", "ctx");
    const int from = ctx->comm().recv(buf, count, to_dtype(dtype, "dtrain_recv"), src, tag);
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
    *work =
        new dtrain_work{ctx->comm().isend(buf, count, to_dtype(dtype, "dtrain_isend"), dst, tag)};
  });
}

dtrain_status_t dtrain_irecv(dtrain_context_t* ctx, void* buf, size_t count, dtrain_dtype_t dtype,
                             int src, int tag, dtrain_work_t** work) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_irecv", "ctx");
    require(work, "dtrain_irecv", "work");
    *work = nullptr;
    *work =
        new dtrain_work{ctx->comm().irecv(buf, count, to_dtype(dtype, "dtrain_irecv"), src, tag)};
  });
}

dtrain_status_t dtrain_work_source(dtrain_work_t* work, int* source) noexcept {
  return guarded([&] {
    require(work, "dtrain_work_source", "work");
    require(source, "dtrain_work_source", "source");
    *source = work->work.source();
  });
}

dtrain_status_t dtrain_gather(dtrain_context_t* ctx, const void* in, void* out, size_t count,
                              dtrain_dtype_t dtype, int root) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_gather", "ctx");
    ctx->comm().gather(in, out, count, to_dtype(dtype, "dtrain_gather"), root);
  });
}

dtrain_status_t dtrain_scatter(dtrain_context_t* ctx, const void* in, void* out, size_t count,
                               dtrain_dtype_t dtype, int root) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_scatter", "ctx");
    ctx->comm().scatter(in, out, count, to_dtype(dtype, "dtrain_scatter"), root);
  });
}

dtrain_status_t dtrain_reduce(dtrain_context_t* ctx, const void* in, void* out, size_t count,
                              dtrain_dtype_t dtype, dtrain_reduce_op_t op, int root) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_reduce", "ctx");
    ctx->comm().reduce(in, out, count, to_dtype(dtype, "dtrain_reduce"), to_op(op, "dtrain_reduce"),
                       root);
  });
}

dtrain_status_t dtrain_alltoall(dtrain_context_t* ctx, const void* in, void* out, size_t count,
                                dtrain_dtype_t dtype) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_alltoall", "ctx");
    ctx->comm().alltoall(in, out, count, to_dtype(dtype, "dtrain_alltoall"));
  });
}

dtrain_status_t dtrain_alltoallv(dtrain_context_t* ctx, const void* in, const size_t* send_counts,
                                 const size_t* send_offsets, void* out, const size_t* recv_counts,
                                 const size_t* recv_offsets, dtrain_dtype_t dtype) noexcept {
  return guarded([&] {
    require(ctx, "dtrain_alltoallv", "ctx");
    for (const auto& [p, name] :
         {std::pair{send_counts, "send_counts"}, std::pair{send_offsets, "send_offsets"},
          std::pair{recv_counts, "recv_counts"}, std::pair{recv_offsets, "recv_offsets"}}) {
      require(p, "dtrain_alltoallv", name);
    }
    dtrain::Comm& comm = ctx->comm();
    const auto n = static_cast<std::size_t>(comm.size());
    comm.alltoallv(in, {send_counts, n}, {send_offsets, n}, out, {recv_counts, n},
                   {recv_offsets, n}, to_dtype(dtype, "dtrain_alltoallv"));
  });
}
