// What the C ABI's files (c_api.cpp, c_api_messages.cpp) share: the handles behind dtrain.h's
// opaque types, the one guard that maps exceptions to status codes and keeps the message for
// dtrain_last_error(), and the checks of C arguments. Internal to libdtrain.
#pragma once

#include <memory>
#include <new>
#include <optional>
#include <string>

#include "dtrain/dtrain.h"
#include "dtrain/dtrain.hpp"

// One handle type for the job's communicator and for its groups, as MPI_Comm is: every function
// taking a ctx runs on either, so a group needs no second set of functions.
struct dtrain_context {
  std::unique_ptr<dtrain::Context> owned;  // dtrain_init's handle: the Context it made
  dtrain::Context* context = nullptr;      // the Context (a group's: its world handle's)
  std::optional<dtrain::Comm> group;       // dtrain_split's, dtrain_subgroup's handle: the group
  dtrain::Comm& comm() { return group ? *group : context->comm(); }
  const dtrain::Comm& comm() const { return group ? *group : context->comm(); }
};
struct dtrain_work {
  dtrain::Work work;
};
struct dtrain_fused {
  dtrain::FusedAllreduce fused;
};

namespace dtrain::c_api {

// Per thread, as errno: two threads failing at once each read their own message.
inline thread_local std::string last_error;

inline dtrain_status_t to_status(dtrain::Error::Code code) {
  switch (code) {
    case dtrain::Error::Code::kInvalid:
      return DTRAIN_ERR_INVALID;
    case dtrain::Error::Code::kComm:
      return DTRAIN_ERR_COMM;
    case dtrain::Error::Code::kSystem:
      return DTRAIN_ERR_SYSTEM;
    case dtrain::Error::Code::kInternal:
      return DTRAIN_ERR_INTERNAL;
    case dtrain::Error::Code::kTimeout:
      return DTRAIN_ERR_TIMEOUT;
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

inline void require(const void* p, const char* function, const char* argument) {
  if (p == nullptr) {
    throw dtrain::Error(dtrain::Error::Code::kInvalid, std::string("dtrain: ") + function + ": " +
                                                           argument +
                                                           " is NULL; expected a valid pointer");
  }
}

// The Context of dtrain_init's handle, for what belongs to the whole job (checkpoints,
// preemption, finalize): a group's handle is refused, naming `function`.
inline dtrain::Context& world_context(dtrain_context_t* ctx, const char* function) {
  require(ctx, function, "ctx");
  if (ctx->group) {
    throw dtrain::Error(dtrain::Error::Code::kInvalid,
                        std::string("dtrain: ") + function +
                            ": ctx is a group's (dtrain_split, dtrain_subgroup); expected the "
                            "handle dtrain_init returned");
  }
  return *ctx->context;
}

inline dtrain::ReduceOp to_op(dtrain_reduce_op_t op, const char* function) {
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
    case DTRAIN_PRODUCT:
      return dtrain::ReduceOp::kProduct;
  }
  throw dtrain::Error(dtrain::Error::Code::kInvalid,
                      std::string("dtrain: ") + function +
                          ": unknown reduce op; expected DTRAIN_SUM, DTRAIN_AVG, DTRAIN_MIN, "
                          "DTRAIN_MAX or DTRAIN_PRODUCT, got " +
                          std::to_string(static_cast<int>(op)));
}

inline dtrain::DType to_dtype(dtrain_dtype_t type, const char* function) {
  switch (static_cast<int>(type)) {
    case DTRAIN_FLOAT32:
      return dtrain::DType::kFloat32;
    case DTRAIN_FLOAT64:
      return dtrain::DType::kFloat64;
    case DTRAIN_INT32:
      return dtrain::DType::kInt32;
    case DTRAIN_INT64:
      return dtrain::DType::kInt64;
    case DTRAIN_UINT8:
      return dtrain::DType::kUInt8;
    case DTRAIN_FLOAT16:
      return dtrain::DType::kFloat16;
    case DTRAIN_BFLOAT16:
      return dtrain::DType::kBFloat16;
  }
  throw dtrain::Error(dtrain::Error::Code::kInvalid,
                      std::string("dtrain: ") + function +
                          ": unknown dtype; expected DTRAIN_FLOAT32, DTRAIN_FLOAT64, DTRAIN_INT32, "
                          "DTRAIN_INT64, DTRAIN_UINT8, DTRAIN_FLOAT16 or DTRAIN_BFLOAT16, got " +
                          std::to_string(static_cast<int>(type)));
}

}  // namespace dtrain::c_api
