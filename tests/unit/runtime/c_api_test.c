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
  int rank = -1, size = -1, local_rank = -1, local_size = -1;

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

  CHECK(dtrain_allreduce_float(ctx, in, out, 3, DTRAIN_SUM) == DTRAIN_OK);
  CHECK(out[0] == 1.0f && out[1] == -2.5f && out[2] == 3.0f);
  CHECK(dtrain_allreduce_float(ctx, in, in, 3, DTRAIN_MAX) == DTRAIN_OK);
  CHECK(in[0] == 1.0f && in[1] == -2.5f && in[2] == 3.0f);
  CHECK(dtrain_allreduce_double(ctx, d, d, 2, DTRAIN_AVG) == DTRAIN_OK);
  CHECK(d[0] == 0.5 && d[1] == -4.0);
  CHECK(dtrain_allreduce_double(ctx, NULL, NULL, 0, DTRAIN_MIN) == DTRAIN_OK);
  CHECK(dtrain_barrier(ctx) == DTRAIN_OK);

  /* Errors: a code and a message, never a crash. */
  CHECK(dtrain_rank(ctx, NULL) == DTRAIN_ERR_INVALID);
  CHECK_ERROR("dtrain: dtrain_rank: out is NULL; expected a valid pointer");
  CHECK(dtrain_allreduce_float(ctx, in, out, 3, (dtrain_reduce_op_t)42) == DTRAIN_ERR_INVALID);
  CHECK_ERROR(
      "dtrain: dtrain_allreduce_float: unknown reduce op; expected DTRAIN_SUM, DTRAIN_AVG, "
      "DTRAIN_MIN or DTRAIN_MAX, got 42");
  CHECK(dtrain_allreduce_float(NULL, in, out, 3, DTRAIN_SUM) == DTRAIN_ERR_INVALID);
  CHECK_ERROR("dtrain: dtrain_allreduce_float: ctx is NULL");
  CHECK(dtrain_allreduce_double(ctx, NULL, d, 2, DTRAIN_SUM) == DTRAIN_ERR_INVALID);
  CHECK_ERROR("dtrain: allreduce: input buffer; expected a pointer to 2 elements, got null");
  CHECK(dtrain_allreduce_float(ctx, in, in + 1, 2, DTRAIN_SUM) == DTRAIN_ERR_INVALID);
  CHECK_ERROR("input and output overlap");
  CHECK(dtrain_init(NULL) == DTRAIN_ERR_INVALID);
  CHECK_ERROR("dtrain: dtrain_init: out is NULL");
  /* A successful call clears the message. */
  CHECK(dtrain_rank(ctx, &rank) == DTRAIN_OK && strcmp(dtrain_last_error(), "") == 0);

  CHECK(dtrain_finalize(ctx) == DTRAIN_OK);
  CHECK(dtrain_finalize(NULL) == DTRAIN_OK);

  /* A failed init leaves no context behind and says why. */
  setenv("DTRAIN_BOOTSTRAP", "bogus", 1);
  ctx = (dtrain_context_t*)&failures; /* anything non-NULL */
  CHECK(dtrain_init(&ctx) == DTRAIN_ERR_INVALID);
  CHECK(ctx == NULL);
  CHECK_ERROR("DTRAIN_BOOTSTRAP: unknown method; expected pmix or single, got \"bogus\"");
  if (failures == 0) printf("c_api_test: all checks passed\n");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
