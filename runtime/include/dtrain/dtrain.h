/* libdtrain's C ABI, a thin layer over the C++ API (dtrain.hpp) for C and foreign-function
 * callers: an opaque context handle and status codes. No exception ever crosses it: a failed call
 * returns a non-zero dtrain_status_t and leaves a message for dtrain_last_error() (per thread).
 *
 *   dtrain_context_t* ctx;
 *   if (dtrain_init(&ctx) != DTRAIN_OK) { fprintf(stderr, "%s\n", dtrain_last_error()); ... }
 *   dtrain_allreduce_float(ctx, grads, grads, n, DTRAIN_AVG);
 *   dtrain_finalize(ctx);
 */
#ifndef DTRAIN_DTRAIN_H
#define DTRAIN_DTRAIN_H

#include <stddef.h>

/* libdtrain.so exports only what is marked so. */
#ifndef DTRAIN_API
#define DTRAIN_API __attribute__((visibility("default")))
#endif

/* Seen from C++ every function is noexcept: the library catches everything. */
#ifdef __cplusplus
#define DTRAIN_NOEXCEPT noexcept
extern "C" {
#else
#define DTRAIN_NOEXCEPT
#endif

/* One process's libdtrain state (dtrain::Context). */
typedef struct dtrain_context dtrain_context_t;

typedef enum {
  DTRAIN_OK = 0,
  DTRAIN_ERR_INVALID = 1, /* a bad argument or setting */
  DTRAIN_ERR_COMM = 2,    /* the launcher, PMIx or MPI failed */
  DTRAIN_ERR_SYSTEM = 3,  /* the operating system refused */
  DTRAIN_ERR_NOMEM = 4,   /* out of memory */
  DTRAIN_ERR_INTERNAL = 5 /* a bug in libdtrain */
} dtrain_status_t;

typedef enum { DTRAIN_SUM = 0, DTRAIN_AVG = 1, DTRAIN_MIN = 2, DTRAIN_MAX = 3 } dtrain_reduce_op_t;

/* Bootstraps this process (see dtrain::init()); *out is NULL after a failure. */
DTRAIN_API dtrain_status_t dtrain_init(dtrain_context_t** out) DTRAIN_NOEXCEPT;
/* Releases everything dtrain_init() acquired. NULL is accepted and does nothing. */
DTRAIN_API dtrain_status_t dtrain_finalize(dtrain_context_t* ctx) DTRAIN_NOEXCEPT;

DTRAIN_API dtrain_status_t dtrain_rank(const dtrain_context_t* ctx, int* out) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_size(const dtrain_context_t* ctx, int* out) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_local_rank(const dtrain_context_t* ctx, int* out) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_local_size(const dtrain_context_t* ctx, int* out) DTRAIN_NOEXCEPT;

/* in == out is an in-place allreduce; otherwise the buffers must not overlap. */
DTRAIN_API dtrain_status_t dtrain_allreduce_float(dtrain_context_t* ctx, const float* in,
                                                  float* out, size_t count,
                                                  dtrain_reduce_op_t op) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_allreduce_double(dtrain_context_t* ctx, const double* in,
                                                   double* out, size_t count,
                                                   dtrain_reduce_op_t op) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_barrier(dtrain_context_t* ctx) DTRAIN_NOEXCEPT;

/* The message of this thread's last failed call, "" after a successful one. The pointer stays
 * valid until this thread's next dtrain_* call. */
DTRAIN_API const char* dtrain_last_error(void) DTRAIN_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* DTRAIN_DTRAIN_H */
