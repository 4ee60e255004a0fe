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
#include <stdint.h>

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
/* A collective started asynchronously (dtrain::Work); free it with dtrain_work_free. */
typedef struct dtrain_work dtrain_work_t;
/* A registered gradient list for fused allreduce (dtrain::FusedAllreduce). */
typedef struct dtrain_fused dtrain_fused_t;

typedef enum {
  DTRAIN_OK = 0,
  DTRAIN_ERR_INVALID = 1,  /* a bad argument or setting */
  DTRAIN_ERR_COMM = 2,     /* the launcher, PMIx or MPI failed */
  DTRAIN_ERR_SYSTEM = 3,   /* the operating system refused */
  DTRAIN_ERR_NOMEM = 4,    /* out of memory */
  DTRAIN_ERR_INTERNAL = 5, /* a bug in libdtrain */
  DTRAIN_ERR_TIMEOUT = 6   /* a peer did not answer before the deadline (DTRAIN_TIMEOUT) */
} dtrain_status_t;

typedef enum {
  DTRAIN_SUM = 0,
  DTRAIN_AVG = 1, /* floating types only */
  DTRAIN_MIN = 2,
  DTRAIN_MAX = 3,
  DTRAIN_PRODUCT = 4
} dtrain_reduce_op_t;

/* Element types. FLOAT16 (IEEE binary16) and BFLOAT16 are 16-bit patterns (uint16_t storage). */
typedef enum {
  DTRAIN_FLOAT32 = 0,
  DTRAIN_FLOAT64 = 1,
  DTRAIN_INT32 = 2,
  DTRAIN_INT64 = 3,
  DTRAIN_UINT8 = 4,
  DTRAIN_FLOAT16 = 5,
  DTRAIN_BFLOAT16 = 6
} dtrain_dtype_t;

/* Bootstraps this process (see dtrain::init()); *out is NULL after a failure. */
DTRAIN_API dtrain_status_t dtrain_init(dtrain_context_t** out) DTRAIN_NOEXCEPT;
/* Releases everything dtrain_init() acquired. NULL is accepted and does nothing; a group's handle
 * is refused (dtrain_group_free). Collective (MPI_Finalize waits for every rank) unless
 * dtrain_abort() was called. */
DTRAIN_API dtrain_status_t dtrain_finalize(dtrain_context_t* ctx) DTRAIN_NOEXCEPT;
/* This rank is leaving the job because of an error (dtrain::Context::abort): writes a line with
 * `reason` to stderr, tells the other ranks, whose collectives then fail naming this rank, and
 * makes dtrain_finalize() wait for no other rank. Call it on an error path before
 * dtrain_finalize() and a non-zero exit. NULL ctx does nothing. */
DTRAIN_API dtrain_status_t dtrain_abort(dtrain_context_t* ctx, const char* reason) DTRAIN_NOEXCEPT;

DTRAIN_API dtrain_status_t dtrain_rank(const dtrain_context_t* ctx, int* out) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_size(const dtrain_context_t* ctx, int* out) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_local_rank(const dtrain_context_t* ctx, int* out) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_local_size(const dtrain_context_t* ctx, int* out) DTRAIN_NOEXCEPT;
/* Which attempt of a job restarted after failures this is, from 0 (DTRAIN_ATTEMPT). */
DTRAIN_API dtrain_status_t dtrain_attempt(const dtrain_context_t* ctx, int* out) DTRAIN_NOEXCEPT;

/* in == out is an in-place allreduce; otherwise the buffers must not overlap. */
DTRAIN_API dtrain_status_t dtrain_allreduce_float(dtrain_context_t* ctx, const float* in,
                                                  float* out, size_t count,
                                                  dtrain_reduce_op_t op) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_allreduce_double(dtrain_context_t* ctx, const double* in,
                                                   double* out, size_t count,
                                                   dtrain_reduce_op_t op) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_barrier(dtrain_context_t* ctx) DTRAIN_NOEXCEPT;

/* Any element type: `count` elements of `dtype` at in/out (in == out: in place). */
DTRAIN_API dtrain_status_t dtrain_allreduce(dtrain_context_t* ctx, const void* in, void* out,
                                            size_t count, dtrain_dtype_t dtype,
                                            dtrain_reduce_op_t op) DTRAIN_NOEXCEPT;
/* Rank `root`'s `count` elements at buf end up in every rank's buf. */
DTRAIN_API dtrain_status_t dtrain_broadcast(dtrain_context_t* ctx, void* buf, size_t count,
                                            dtrain_dtype_t dtype, int root) DTRAIN_NOEXCEPT;

/* out holds size * count elements: rank r's count elements land at r * count. */
DTRAIN_API dtrain_status_t dtrain_allgather(dtrain_context_t* ctx, const void* in, void* out,
                                            size_t count, dtrain_dtype_t dtype) DTRAIN_NOEXCEPT;
/* in holds size * count elements; out receives this rank's count elements of their reduction. */
DTRAIN_API dtrain_status_t dtrain_reduce_scatter(dtrain_context_t* ctx, const void* in, void* out,
                                                 size_t count, dtrain_dtype_t dtype,
                                                 dtrain_reduce_op_t op) DTRAIN_NOEXCEPT;

/* Asynchronous allreduce: *work is set on success; buffers stay untouched until it is done. */
DTRAIN_API dtrain_status_t dtrain_allreduce_async(dtrain_context_t* ctx, const void* in, void* out,
                                                  size_t count, dtrain_dtype_t dtype,
                                                  dtrain_reduce_op_t op,
                                                  dtrain_work_t** work) DTRAIN_NOEXCEPT;
/* Blocks until done; returns the collective's status (DTRAIN_ERR_TIMEOUT after DTRAIN_TIMEOUT). */
DTRAIN_API dtrain_status_t dtrain_work_wait(dtrain_work_t* work) DTRAIN_NOEXCEPT;
/* *done = 1 when complete, 0 when not yet; never blocks. */
DTRAIN_API dtrain_status_t dtrain_work_test(dtrain_work_t* work, int* done) DTRAIN_NOEXCEPT;
/* NULL is accepted. A work freed before completion still completes in order. */
DTRAIN_API dtrain_status_t dtrain_work_free(dtrain_work_t* work) DTRAIN_NOEXCEPT;

/* Point-to-point messages of host buffers (dtrain::Comm::send and recv, dtrain.hpp): count
 * elements of dtype to rank dst / from rank src (DTRAIN_ANY_SOURCE: any rank), with a tag (>= 0)
 * that the receive names too. A send completes once its bytes are on their way; a receive once
 * they are in buf, *source (when not NULL) set to the sender. DTRAIN_ERR_INVALID for a message
 * whose size differs from its receive's, DTRAIN_ERR_COMM for a peer that left, DTRAIN_ERR_TIMEOUT
 * after DTRAIN_TIMEOUT. */
#define DTRAIN_ANY_SOURCE (-1)
DTRAIN_API dtrain_status_t dtrain_send(dtrain_context_t* ctx, const void* buf, size_t count,
                                       dtrain_dtype_t dtype, int dst, int tag) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_recv(dtrain_context_t* ctx, void* buf, size_t count,
                                       dtrain_dtype_t dtype, int src, int tag,
                                       int* source) DTRAIN_NOEXCEPT;
/* The same, started: *work is set on success (dtrain_work_wait, _test, _free); buffers stay
 * untouched until it is done. */
DTRAIN_API dtrain_status_t dtrain_isend(dtrain_context_t* ctx, const void* buf, size_t count,
                                        dtrain_dtype_t dtype, int dst, int tag,
                                        dtrain_work_t** work) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_irecv(dtrain_context_t* ctx, void* buf, size_t count,
                                        dtrain_dtype_t dtype, int src, int tag,
                                        dtrain_work_t** work) DTRAIN_NOEXCEPT;
/* The sender of a completed receive; -1 for a send or a receive not complete. */
DTRAIN_API dtrain_status_t dtrain_work_source(dtrain_work_t* work, int* source) DTRAIN_NOEXCEPT;

/* Rooted and all-to-all collectives (dtrain::Comm::gather ..., dtrain.hpp): count elements per
 * block; gather's out and scatter's in are the root's (NULL elsewhere), reduce writes the root's
 * out only. alltoallv: one count and offset (elements) per rank, for each direction. */
DTRAIN_API dtrain_status_t dtrain_gather(dtrain_context_t* ctx, const void* in, void* out,
                                         size_t count, dtrain_dtype_t dtype,
                                         int root) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_scatter(dtrain_context_t* ctx, const void* in, void* out,
                                          size_t count, dtrain_dtype_t dtype,
                                          int root) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_reduce(dtrain_context_t* ctx, const void* in, void* out,
                                         size_t count, dtrain_dtype_t dtype, dtrain_reduce_op_t op,
                                         int root) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_alltoall(dtrain_context_t* ctx, const void* in, void* out,
                                           size_t count, dtrain_dtype_t dtype) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_alltoallv(dtrain_context_t* ctx, const void* in,
                                            const size_t* send_counts, const size_t* send_offsets,
                                            void* out, const size_t* recv_counts,
                                            const size_t* recv_offsets,
                                            dtrain_dtype_t dtype) DTRAIN_NOEXCEPT;

/* Sub-communicators (dtrain::Comm::split, ::subgroup, dtrain.hpp), sharing the job's connections
 * (no rendezvous). *out is a handle that every function taking a ctx accepts: its collectives and
 * messages then run among the group's ranks, in the group's numbering (dtrain_rank, dtrain_size:
 * the group's; dtrain_local_rank, _local_size, _attempt: the node's, as on the job's handle); NULL
 * for a rank the group leaves out. A group of a group works too. Free each with
 * dtrain_group_free before dtrain_finalize of its job; checkpoints, preemption and finalize take
 * only dtrain_init's handle.
 * dtrain_split is MPI_Comm_split, collective over ctx: the ranks passing one color (>= 0) form a
 * group, ordered by key, then by their rank in ctx; DTRAIN_NO_GROUP: this rank joins none.
 * dtrain_subgroup is collective over its members only: ranks[0 .. n - 1] (ctx's numbering, each
 * once) become group ranks 0 .. n - 1; they agree on the group's id in log2(n) messages.
 * dtrain_subgroup_numbered is the same group made without a message: `number` (0 to 2^30 - 2) is
 * the caller's name for it, the same on every member and given to no other group of the job's
 * handle (a count of groups every rank keeps, as torch's new_group does); a number given twice
 * in a process is refused. timeout_ms > 0: the deadline of the group's collectives and messages,
 * which its errors name as the group's; 0: ctx's (DTRAIN_TIMEOUT). */
#define DTRAIN_NO_GROUP (-1)
DTRAIN_API dtrain_status_t dtrain_split(dtrain_context_t* ctx, int color, int key,
                                        dtrain_context_t** out) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_subgroup(dtrain_context_t* ctx, const int* ranks, size_t n,
                                           dtrain_context_t** out) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_subgroup_numbered(dtrain_context_t* ctx, const int* ranks,
                                                    size_t n, int64_t number, int64_t timeout_ms,
                                                    dtrain_context_t** out) DTRAIN_NOEXCEPT;
/* NULL is accepted and does nothing; dtrain_init's handle is refused (dtrain_finalize). */
DTRAIN_API dtrain_status_t dtrain_group_free(dtrain_context_t* group) DTRAIN_NOEXCEPT;

/* Registers n tensors (data[i], counts[i] elements) to be allreduced in place together, in
 * buckets of bucket_bytes (0: DTRAIN_FUSION_BYTES, default 64 MiB). Every rank registers the same
 * list. */
DTRAIN_API dtrain_status_t dtrain_fused_create(dtrain_context_t* ctx, void* const* data,
                                               const size_t* counts, size_t n, dtrain_dtype_t dtype,
                                               dtrain_reduce_op_t op, size_t bucket_bytes,
                                               dtrain_fused_t** out) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_fused_run(dtrain_fused_t* fused) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_fused_free(dtrain_fused_t* fused) DTRAIN_NOEXCEPT;

/* ---- Shard, Checkpointer, Preemption (dtrain/shard.hpp, checkpoint.hpp, preemption.hpp) ---- */

/* The exit status that asks dtrain's job scripts to requeue the job (dtrain::kExitRequeue). */
#define DTRAIN_EXIT_REQUEUE 85

typedef struct dtrain_shard dtrain_shard_t;               /* dtrain::Shard */
typedef struct dtrain_checkpointer dtrain_checkpointer_t; /* dtrain::Checkpointer */
typedef struct dtrain_checkpoint dtrain_checkpoint_t;     /* a loaded dtrain::Checkpoint */
typedef struct dtrain_preemption dtrain_preemption_t;     /* dtrain::Preemption */

typedef enum {
  DTRAIN_SHARD_PAD = 0,       /* every rank ceil(N / world) samples, wrapping around */
  DTRAIN_SHARD_DROP = 1,      /* every rank floor(N / world) samples, the tail dropped */
  DTRAIN_SHARD_EXACT_ONCE = 2 /* every sample once; counts differ by up to one */
} dtrain_shard_tail_t;

/* This rank's share of num_samples samples; shuffle != 0 shuffles per epoch from seed. */
DTRAIN_API dtrain_status_t dtrain_shard_create(uint64_t num_samples, int rank, int world,
                                               int shuffle, uint64_t seed, dtrain_shard_tail_t tail,
                                               dtrain_shard_t** out) DTRAIN_NOEXCEPT;
/* Samples per epoch for this rank. */
DTRAIN_API dtrain_status_t dtrain_shard_size(const dtrain_shard_t* shard,
                                             uint64_t* out) DTRAIN_NOEXCEPT;
/* This rank's indices for `epoch` from position `consumed` on, into out[0 .. capacity); *written
 * is how many (size - consumed; DTRAIN_ERR_INVALID when capacity is smaller). */
DTRAIN_API dtrain_status_t dtrain_shard_indices(const dtrain_shard_t* shard, uint64_t epoch,
                                                uint64_t consumed, uint64_t* out, size_t capacity,
                                                size_t* written) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_shard_free(dtrain_shard_t* shard) DTRAIN_NOEXCEPT;

/* A Checkpointer writing into dir, keeping `keep` checkpoints (0: all). ctx must outlive it. */
DTRAIN_API dtrain_status_t dtrain_checkpointer_create(dtrain_context_t* ctx, const char* dir,
                                                      int keep,
                                                      dtrain_checkpointer_t** out) DTRAIN_NOEXCEPT;
/* Flags of dtrain_checkpointer_create_with_flags. DISCARD_NEWER: a save removes checkpoints with a
 * higher step instead of refusing (DTRAIN_ERR_INVALID, naming the newer file), for a deliberate
 * restart from an older step (CheckpointOptions::discard_newer). */
#define DTRAIN_CHECKPOINT_DISCARD_NEWER 1u
/* dtrain_checkpointer_create with flags (0, or DTRAIN_CHECKPOINT_* or'ed); unknown bits are
 * DTRAIN_ERR_INVALID. */
DTRAIN_API dtrain_status_t
dtrain_checkpointer_create_with_flags(dtrain_context_t* ctx, const char* dir, int keep,
                                      unsigned flags, dtrain_checkpointer_t** out) DTRAIN_NOEXCEPT;
/* Collective: rank 0 saves data[0 .. size); every rank adds its own rank_data (may be NULL/0). */
DTRAIN_API dtrain_status_t dtrain_checkpointer_save(dtrain_checkpointer_t* ckpt, int64_t step,
                                                    const void* data, size_t size,
                                                    const void* rank_data,
                                                    size_t rank_size) DTRAIN_NOEXCEPT;
/* Collective: the newest valid checkpoint in *out, or *out = NULL when there is none. */
DTRAIN_API dtrain_status_t dtrain_checkpointer_load_latest(
    dtrain_checkpointer_t* ckpt, dtrain_checkpoint_t** out) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_checkpointer_free(dtrain_checkpointer_t* ckpt) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_checkpoint_step(const dtrain_checkpoint_t* c,
                                                  int64_t* out) DTRAIN_NOEXCEPT;
/* The shared data and this rank's blob; the pointers live as long as the checkpoint. */
DTRAIN_API dtrain_status_t dtrain_checkpoint_data(const dtrain_checkpoint_t* c, const void** data,
                                                  size_t* size) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_checkpoint_rank_data(const dtrain_checkpoint_t* c,
                                                       const void** data,
                                                       size_t* size) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_checkpoint_free(dtrain_checkpoint_t* c) DTRAIN_NOEXCEPT;

/* Watches DTRAIN_PREEMPT_SIGNALS (default SIGUSR1 and SIGTERM); one at a time per process. */
DTRAIN_API dtrain_status_t dtrain_preemption_create(dtrain_context_t* ctx,
                                                    dtrain_preemption_t** out) DTRAIN_NOEXCEPT;
/* Collective: *stop = 1 on every rank once any rank got one of the signals, else 0. */
DTRAIN_API dtrain_status_t dtrain_preemption_should_stop(dtrain_preemption_t* p,
                                                         int* stop) DTRAIN_NOEXCEPT;
DTRAIN_API dtrain_status_t dtrain_preemption_free(dtrain_preemption_t* p) DTRAIN_NOEXCEPT;

/* The message of this thread's last failed call, "" after a successful one. The pointer stays
 * valid until this thread's next dtrain_* call. */
DTRAIN_API const char* dtrain_last_error(void) DTRAIN_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* DTRAIN_DTRAIN_H */
