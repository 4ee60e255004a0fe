// The C ABI (dtrain.h): the only extern "C" definitions of libdtrain. Every function is noexcept
// and runs its body through one guard that maps exceptions to status codes and keeps the message
// for dtrain_last_error(), so no exception ever unwinds into C.
#include <new>
#include <string>

#include "dtrain/dtrain.h"
#include "dtrain/dtrain.hpp"

struct dtrain_context {
  dtrain::Context ctx;
};

namespace {

// Per thread, as errno: two threads failing at once each read their own message.
thread_local std::string last_error;

dtrain_status_t to_status(dtrain::Error::Code code) {
  switch (code) {
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
}

template <typename Body>
dtrain_status_t guarded(Body&& body) noexcept {
  try {
    last_error.clear();
    body();
    return DTRAIN_OK;
  } catch (const dtrain::Error& e) {
    last_error = e.what();
    return to_status(e.code());
  } catch (const std::bad_alloc&) {
    last_error = "dtrain: out of memory";
    return DTRAIN_ERR_NOMEM;
  } catch (const std::exception& e) {
    last_error = std::string("dtrain: internal error (please report): ") + e.what();
    return DTRAIN_ERR_INTERNAL;
  } catch (...) {
    last_error = "dtrain: internal error (please report): unknown exception";
    return DTRAIN_ERR_INTERNAL;
  }
}

void require(const void* p, const char* function, const char* argument) {
  if (p == nullptr) {
    throw dtrain::Error(dtrain::Error::Code::kInvalid, std::string("dtrain: ") + function + ": " +
                                                           argument +
                                                           " is NULL; expected a valid pointer");
  }
}

dtrain::ReduceOp to_op(dtrain_reduce_op_t op, const char* function) {
  // Switched on as an int: a C caller can pass any value, and C++ compilers may assume an enum
  // holds only its enumerators' range.
  switch (static_cast<int>(op)) {
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
                      std::string("dtrain: ") + function +
                          ": unknown reduce op; expected DTRAIN_SUM, DTRAIN_AVG, DTRAIN_MIN or "
                          "DTRAIN_MAX, got " +
                          std::to_string(static_cast<int>(op)));
}

template <typename Pick>
dtrain_status_t world_field(const dtrain_context_t* ctx, int* out, const char* function,
                            Pick pick) noexcept {
  return guarded([&] {
    require(ctx, function, "ctx");
    require(out, function, "out");
    *out = pick(ctx->ctx.world());
  });
}

template <typename T>
dtrain_status_t allreduce(dtrain_context_t* ctx, const T* in, T* out, size_t count,
                          dtrain_reduce_op_t op, const char* function) noexcept {
  return guarded([&] {
    require(ctx, function, "ctx");
    ctx->ctx.comm().allreduce(in, out, count, dtrain::dtype_of<T>(), to_op(op, function));
  });
}

}  // namespace

extern "C" {

dtrain_status_t dtrain_init(dtrain_context_t** out) noexcept {
  return guarded([&] {
    require(out, "dtrain_init", "out");
    *out = nullptr;
    *out = new dtrain_context{dtrain::init()};
  });
}

dtrain_status_t dtrain_finalize(dtrain_context_t* ctx) noexcept {
  return guarded([&] { delete ctx; });
}

dtrain_status_t dtrain_rank(const dtrain_context_t* ctx, int* out) noexcept {
  return world_field(ctx, out, "dtrain_rank", [](const dtrain::WorldInfo& w) { return w.rank; });
}

dtrain_status_t dtrain_size(const dtrain_context_t* ctx, int* out) noexcept {
  return world_field(ctx, out, "dtrain_size", [](const dtrain::WorldInfo& w) { return w.size; });
}

dtrain_status_t dtrain_local_rank(const dtrain_context_t* ctx, int* out) noexcept {
  return world_field(ctx, out, "dtrain_local_rank",
                     [](const dtrain::WorldInfo& w) { return w.local_rank; });
}

dtrain_status_t dtrain_local_size(const dtrain_context_t* ctx, int* out) noexcept {
  return world_field(ctx, out, "dtrain_local_size",
                     [](const dtrain::WorldInfo& w) { return w.local_size; });
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
    ctx->ctx.comm().barrier();
  });
}

const char* dtrain_last_error(void) noexcept { return last_error.c_str(); }

}  // extern "C"
