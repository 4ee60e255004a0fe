/* The C ABI used from C (compiled as C11 with -Wpedantic): init, world queries, allreduce,
 * finalize, and errors as status codes with a message in dtrain_last_error(). */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include <dtrain/dtrain.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                           \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond, \
              dtrain_last_error());                                                           \
      ++failures;                                                                             \
    }                                                                                         \
  } while (0)

/* The last error contains `want`. */
#define CHECK_ERROR(want)                                                                     \
  do {                                                                                        \
    if (strstr(dtrain_last_error(), (want)) == NULL) {                                        \
      fprintf(stderr, "%s:%d: expected last error to contain \"%s\", got \"%s\"\n", __FILE__, \
              __LINE__, (want), dtrain_last_error());                                         \
      ++failures;                                                                             \
    }                                                                                         \
  } while (0)

int main(void) {
  dtrain_context_t* ctx = NULL;
  float in[3] = {1.0f, -2.5f, 3.0f};
  float out[3] = {0.0f, 0.0f, 0.0f};
  double d[2] = {0.5, -4.0};
  int rank = -1, size = -1, local_rank = -1, local_size = -1, attempt = -1;
  unsigned char bytes[4] = {1, 2, 3, 250};
  unsigned short halves[2] = {0x3c00, 0xc000};

  CHECK(dtrain_init(&ctx) == DTRAIN_OK);
  if (ctx == NULL) {
    fprintf(stderr, "c_api_test: dtrain_init failed: %s\n", dtrain_last_error());
    return EXIT_FAILURE;
  }
  CHECK(strcmp(dtrain_last_error(), "") == 0);
  CHECK(dtrain_rank(ctx, &rank) == DTRAIN_OK && rank == 0);
  CHECK(dtrain_size(ctx, &size) == DTRAIN_OK && size == 1);
  CHECK(dtrain_local_rank(ctx, &local_rank) == DTRAIN_OK && local_rank == 0);
  CHECK(dtrain_local_size(ctx, &local_size) == DTRAIN_OK && local_size == 1);
  CHECK(dtrain_attempt(ctx, &attempt) == DTRAIN_OK && attempt == 0);

  CHECK(dtrain_allreduce_float(ctx, in, out, 3, DTRAIN_SUM) == DTRAIN_OK);
  CHECK(out[0] == 1.0f && out[1] == -2.5f && out[2] == 3.0f);
  CHECK(dtrain_allreduce_float(ctx, in, in, 3, DTRAIN_MAX) == DTRAIN_OK);
  CHECK(in[0] == 1.0f && in[1] == -2.5f && in[2] == 3.0f);
  CHECK(dtrain_allreduce_double(ctx, d, d, 2, DTRAIN_AVG) == DTRAIN_OK);
  CHECK(d[0] == 0.5 && d[1] == -4.0);
  CHECK(dtrain_allreduce_double(ctx, NULL, NULL, 0, DTRAIN_MIN) == DTRAIN_OK);
  CHECK(dtrain_barrier(ctx) == DTRAIN_OK);
  CHECK(dtrain_broadcast(ctx, bytes, 4, DTRAIN_UINT8, 0) == DTRAIN_OK);
  CHECK(bytes[0] == 1 && bytes[3] == 250);
  CHECK(dtrain_allreduce(ctx, bytes, bytes, 4, DTRAIN_UINT8, DTRAIN_PRODUCT) == DTRAIN_OK);
  CHECK(bytes[1] == 2 && bytes[2] == 3);
  CHECK(dtrain_allreduce(ctx, halves, halves, 2, DTRAIN_FLOAT16, DTRAIN_AVG) == DTRAIN_OK);
  CHECK(halves[0] == 0x3c00 && halves[1] == 0xc000); /* 1.0 and -2.0 unchanged */
  CHECK(dtrain_allgather(ctx, in, out, 3, DTRAIN_FLOAT32) == DTRAIN_OK);
  CHECK(out[0] == 1.0f && out[1] == -2.5f && out[2] == 3.0f);
  CHECK(dtrain_reduce_scatter(ctx, d, d, 2, DTRAIN_FLOAT64, DTRAIN_SUM) == DTRAIN_OK);
  CHECK(d[0] == 0.5 && d[1] == -4.0);
  {
    dtrain_work_t* work = NULL;
    int done = 0;
    int ints[2] = {7, -3};
    int ints_out[2] = {0, 0};
    CHECK(dtrain_allreduce_async(ctx, ints, ints_out, 2, DTRAIN_INT32, DTRAIN_MIN, &work) ==
          DTRAIN_OK);
    CHECK(work != NULL);
    CHECK(dtrain_work_wait(work) == DTRAIN_OK);
    CHECK(dtrain_work_test(work, &done) == DTRAIN_OK && done == 1);
    CHECK(ints_out[0] == 7 && ints_out[1] == -3);
    CHECK(dtrain_work_free(work) == DTRAIN_OK);
    CHECK(dtrain_work_test(NULL, &done) == DTRAIN_ERR_INVALID);
    CHECK_ERROR("dtrain: dtrain_work_test: work is NULL");
  }
  { /* one rank: messages to itself, and the collectives built on them */
    dtrain_work_t* work = NULL;
    int source = -2;
    long long sent[2] = {5, 6};
    long long got[2] = {0, 0};
    double x[3] = {1, 2, 3};
    double y[3] = {0, 0, 0};
    size_t counts[1] = {3};
    size_t offsets[1] = {0};
    CHECK(dtrain_send(ctx, sent, 2, DTRAIN_INT64, 0, 4) == DTRAIN_OK);
    CHECK(dtrain_irecv(ctx, got, 2, DTRAIN_INT64, DTRAIN_ANY_SOURCE, 4, &work) == DTRAIN_OK);
    CHECK(dtrain_work_wait(work) == DTRAIN_OK);
    CHECK(dtrain_work_source(work, &source) == DTRAIN_OK && source == 0);
    CHECK(got[0] == 5 && got[1] == 6);
    CHECK(dtrain_work_free(work) == DTRAIN_OK);
    CHECK(dtrain_isend(ctx, sent, 2, DTRAIN_INT64, 0, 5, &work) == DTRAIN_OK);
    CHECK(dtrain_work_wait(work) == DTRAIN_OK && dtrain_work_free(work) == DTRAIN_OK);
    source = -2;
    CHECK(dtrain_recv(ctx, got, 1, DTRAIN_INT64, 0, 5, &source) == DTRAIN_ERR_INVALID);
    CHECK_ERROR(
        "dtrain: recv from rank 0 (tag 5, 8 bytes; rank 0 of 1): rank 0 sent 16 bytes; "
        "expected a message of the receive's size: send and receive the same count and "
        "type");
    CHECK(dtrain_send(ctx, sent, 2, DTRAIN_INT64, 1, 0) == DTRAIN_ERR_INVALID);
    CHECK_ERROR("dtrain: send: destination rank out of range; expected 0 to 0, got 1");
    CHECK(dtrain_gather(ctx, x, y, 3, DTRAIN_FLOAT64, 0) == DTRAIN_OK && y[2] == 3);
    CHECK(dtrain_reduce(ctx, x, x, 3, DTRAIN_FLOAT64, DTRAIN_AVG, 0) == DTRAIN_OK && x[1] == 2);
    CHECK(dtrain_scatter(ctx, x, y, 3, DTRAIN_FLOAT64, 0) == DTRAIN_OK && y[0] == 1);
    CHECK(dtrain_alltoall(ctx, x, y, 3, DTRAIN_FLOAT64) == DTRAIN_OK && y[1] == 2);
    CHECK(dtrain_alltoallv(ctx, x, counts, offsets, y, counts, offsets, DTRAIN_FLOAT64) ==
          DTRAIN_OK);
    CHECK(dtrain_alltoallv(ctx, x, NULL, offsets, y, counts, offsets, DTRAIN_FLOAT64) ==
          DTRAIN_ERR_INVALID);
    CHECK_ERROR("dtrain: dtrain_alltoallv: send_counts is NULL; expected a valid pointer");
  }
  {
    float g1[4] = {1, 2, 3, 4};
    float g2[2] = {5, 6};
    void* grads[2];
    size_t counts[2] = {4, 2};
    dtrain_fused_t* fused = NULL;
    grads[0] = g1;
    grads[1] = g2;
    CHECK(dtrain_fused_create(ctx, grads, counts, 2, DTRAIN_FLOAT32, DTRAIN_AVG, 0, &fused) ==
          DTRAIN_OK);
    CHECK(dtrain_fused_run(fused) == DTRAIN_OK);
    CHECK(g1[3] == 4.0f && g2[0] == 5.0f && g2[1] == 6.0f);
    CHECK(dtrain_fused_free(fused) == DTRAIN_OK);
    grads[1] = NULL;
    CHECK(dtrain_fused_create(ctx, grads, counts, 2, DTRAIN_FLOAT32, DTRAIN_SUM, 0, &fused) ==
          DTRAIN_ERR_INVALID);
    CHECK(fused == NULL);
    CHECK_ERROR("dtrain: allreduce_fused: tensor 1; expected a pointer to 2 elements, got null");
  }

  /* Errors: a code and a message, never a crash. */
  CHECK(dtrain_rank(ctx, NULL) == DTRAIN_ERR_INVALID);
  CHECK_ERROR("dtrain: dtrain_rank: out is NULL; expected a valid pointer");
  CHECK(dtrain_allreduce_float(ctx, in, out, 3, (dtrain_reduce_op_t)42) == DTRAIN_ERR_INVALID);
  CHECK_ERROR(
      "dtrain: dtrain_allreduce_float: unknown reduce op; expected DTRAIN_SUM, DTRAIN_AVG, "
      "DTRAIN_MIN, DTRAIN_MAX or DTRAIN_PRODUCT, got 42");
  CHECK(dtrain_allreduce_float(NULL, in, out, 3, DTRAIN_SUM) == DTRAIN_ERR_INVALID);
  CHECK_ERROR("dtrain: dtrain_allreduce_float: ctx is NULL");
  CHECK(dtrain_allreduce_double(ctx, NULL, d, 2, DTRAIN_SUM) == DTRAIN_ERR_INVALID);
  CHECK_ERROR("dtrain: allreduce: input buffer; expected a pointer to 2 elements, got null");
  CHECK(dtrain_allreduce_float(ctx, in, in + 1, 2, DTRAIN_SUM) == DTRAIN_ERR_INVALID);
  CHECK_ERROR("input and output overlap");
  CHECK(dtrain_allreduce(ctx, bytes, bytes, 4, (dtrain_dtype_t)99, DTRAIN_SUM) ==
        DTRAIN_ERR_INVALID);
  CHECK_ERROR("dtrain: dtrain_allreduce: unknown dtype; expected DTRAIN_FLOAT32");
  CHECK(dtrain_allreduce(ctx, bytes, bytes, 4, DTRAIN_UINT8, DTRAIN_AVG) == DTRAIN_ERR_INVALID);
  CHECK_ERROR("avg is defined for floating types");
  CHECK(dtrain_init(NULL) == DTRAIN_ERR_INVALID);
  CHECK_ERROR("dtrain: dtrain_init: out is NULL");
  /* A successful call clears the message. */
  CHECK(dtrain_rank(ctx, &rank) == DTRAIN_OK && strcmp(dtrain_last_error(), "") == 0);

  /* Leaving after an error: one rank has nobody to tell; dtrain_finalize still releases. */
  CHECK(dtrain_abort(NULL, "nothing") == DTRAIN_OK);
  CHECK(dtrain_abort(ctx, "a test") == DTRAIN_OK);
  CHECK(dtrain_finalize(ctx) == DTRAIN_OK);
  CHECK(dtrain_finalize(NULL) == DTRAIN_OK);

  /* A failed init leaves no context behind and says why. */
  setenv("DTRAIN_BOOTSTRAP", "bogus", 1);
  ctx = (dtrain_context_t*)&failures; /* anything non-NULL */
  CHECK(dtrain_init(&ctx) == DTRAIN_ERR_INVALID);
  CHECK(ctx == NULL);
  CHECK_ERROR(
      "DTRAIN_BOOTSTRAP: unknown method; expected pmix, mpi, tcp, env or single, got \"bogus\"");
  if (failures == 0) printf("c_api_test: all checks passed\n");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
