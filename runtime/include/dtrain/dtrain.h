/* libdtrain's C ABI: opaque handles and status codes; no exception ever crosses it. A failed call
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

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dtrain_context dtrain_context_t;

typedef enum {
  DTRAIN_OK = 0,
  DTRAIN_ERR_INVALID = 1,
  DTRAIN_ERR_COMM = 2,
  DTRAIN_ERR_SYSTEM = 3,
  DTRAIN_ERR_NOMEM = 4,
  DTRAIN_ERR_INTERNAL = 5
} dtrain_status_t;

typedef enum { DTRAIN_SUM = 0, DTRAIN_AVG = 1, DTRAIN_MIN = 2, DTRAIN_MAX = 3 } dtrain_reduce_op_t;

dtrain_status_t dtrain_init(dtrain_context_t** out);
/* Safe with NULL. */
dtrain_status_t dtrain_finalize(dtrain_context_t* ctx);

dtrain_status_t dtrain_rank(const dtrain_context_t* ctx, int* out);
dtrain_status_t dtrain_size(const dtrain_context_t* ctx, int* out);
dtrain_status_t dtrain_local_rank(const dtrain_context_t* ctx, int* out);
dtrain_status_t dtrain_local_size(const dtrain_context_t* ctx, int* out);

/* in == out is an in-place allreduce. */
dtrain_status_t dtrain_allreduce_float(dtrain_context_t* ctx, const float* in, float* out,
                                       size_t count, dtrain_reduce_op_t op);
dtrain_status_t dtrain_allreduce_double(dtrain_context_t* ctx, const double* in, double* out,
                                        size_t count, dtrain_reduce_op_t op);
dtrain_status_t dtrain_barrier(dtrain_context_t* ctx);

/* The message of this thread's last failed call; "" when none. Valid until the next call. */
const char* dtrain_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* DTRAIN_DTRAIN_H */
