// The only extern "C" definitions of libdtrain. Every function is noexcept and maps exceptions to
// status codes through one guard; the message stays readable through dtrain_last_error().
#include <new>
#include <string>

#include "dtrain/dtrain.h"
#include "dtrain/dtrain.hpp"

struct dtrain_context {
  dtrain::Context ctx;
};

namespace {

thread_local std::string g_last_error;

template <typename F>
dtrain_status_t guarded(F&& body) noexcept {
  try {
    g_last_error.clear();
    body();
    return DTRAIN_OK;
  } catch (const dtrain::Error& e) {
    g_last_error = e.what();
    switch (e.code()) {
      case dtrain::Error::Code::kInvalid:
        return DTRAIN_ERR_INVALID;
      case dtrain::Error::Code::kComm:
        return DTRAIN_ERR_COMM;
      case dtrain::Error::Code::kSystem:
        return DTRAIN_ERR_SYSTEM;
      case dtrain::Error::Code::kInternal:
        return DTRAIN_ERR_INTERNAL;
    }
    return DTRAIN_ERR_INTERNAL;
  } catch (const std::bad_alloc&) {
    g_last_error = "dtrain: out of memory";
    return DTRAIN_ERR_NOMEM;
  } catch (const std::exception& e) {
    g_last_error = std::string("dtrain: internal error: ") + e.what();
    return DTRAIN_ERR_INTERNAL;
  } catch (...) {
    g_last_error = "dtrain: internal error: unknown exception";
    return DTRAIN_ERR_INTERNAL;
  }
}

void require(const void* p, const char* what) {
  if (p == nullptr) {
    throw dtrain::Error(dtrain::Error::Code::kInvalid,
                        std::string("dtrain: ") + what + " is NULL; expected a valid pointer");
  }
}

dtrain::ReduceOp to_op(dtrain_reduce_op_t op) {
  switch (op) {
    case DTRAIN_SUM:
      return dtrain::ReduceOp::kSum;
    case DTRAIN_AVG:
      return dtrain::ReduceOp::kAvg;
    case DTRAIN_MIN:
      return dtrain::ReduceOp::kMin;
    case DTRAIN_MAX:
      return dtrain::ReduceOp::kMax;
  }
  throw dtrain::Error(dtrain::Error::Code::kInvalid,
                      "dtrain: reduce op " + std::to_string(static_cast<int>(op)) +
                          " is unknown; expected DTRAIN_SUM, DTRAIN_AVG, DTRAIN_MIN or DTRAIN_MAX");
}

template <typename T>
dtrain_status_t world_field(const dtrain_context_t* ctx, int* out, T pick) {
  return guarded([&] {
    require(ctx, "context");
    require(out, "output pointer");
    *out = pick(ctx->ctx.world());
  });
}

}  // namespace

extern "C" {

dtrain_status_t dtrain_init(dtrain_context_t** out) {
  return guarded([&] {
    require(out, "output pointer");
    *out = nullptr;
    *out = new dtrain_context{dtrain::init()};
  });
}

dtrain_status_t dtrain_finalize(dtrain_context_t* ctx) {
  return guarded([&] { delete ctx; });
}

dtrain_status_t dtrain_rank(const dtrain_context_t* ctx, int* out) {
  return world_field(ctx, out, [](const dtrain::WorldInfo& w) { return w.rank; });
}
dtrain_status_t dtrain_size(const dtrain_context_t* ctx, int* out) {
  return world_field(ctx, out, [](const dtrain::WorldInfo& w) { return w.size; });
}
dtrain_status_t dtrain_local_rank(const dtrain_context_t* ctx, int* out) {
  return world_field(ctx, out, [](const dtrain::WorldInfo& w) { return w.local_rank; });
}
dtrain_status_t dtrain_local_size(const dtrain_context_t* ctx, int* out) {
  return world_field(ctx, out, [](const dtrain::WorldInfo& w) { return w.local_size; });
}

dtrain_status_t dtrain_allreduce_float(dtrain_context_t* ctx, const float* in, float* out,
                                       size_t count, dtrain_reduce_op_t op) {
  return guarded([&] {
    require(ctx, "context");
    if (count > 0) {
      require(in, "input buffer");
      require(out, "output buffer");
    }
    ctx->ctx.comm().allreduce(in, out, count, dtrain::DType::kFloat32, to_op(op));
  });
}

dtrain_status_t dtrain_allreduce_double(dtrain_context_t* ctx, const double* in, double* out,
                                        size_t count, dtrain_reduce_op_t op) {
  return guarded([&] {
    require(ctx, "context");
    if (count > 0) {
      require(in, "input buffer");
      require(out, "output buffer");
    }
    ctx->ctx.comm().allreduce(in, out, count, dtrain::DType::kFloat64, to_op(op));
  });
}

dtrain_status_t dtrain_barrier(dtrain_context_t* ctx) {
  return guarded([&] {
    require(ctx, "context");
    ctx->ctx.comm().barrier();
  });
}

const char* dtrain_last_error(void) { return g_last_error.c_str(); }

}  // extern "C"
