/* The C ABI used from C: init, world queries, allreduce, errors through dtrain_last_error(). */
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

int main(void) {
  dtrain_context_t* ctx = NULL;
  float in[3] = {1.0f, 2.0f, 3.0f};
  float out[3] = {0};
  double d[2] = {0.5, -4.0};
  int rank = -1, size = -1, local_rank = -1, local_size = -1;

  CHECK(dtrain_init(&ctx) == DTRAIN_OK);
  CHECK(ctx != NULL);
  CHECK(dtrain_rank(ctx, &rank) == DTRAIN_OK && rank == 0);
  CHECK(dtrain_size(ctx, &size) == DTRAIN_OK && size == 1);
  CHECK(dtrain_local_rank(ctx, &local_rank) == DTRAIN_OK && local_rank == 0);
  CHECK(dtrain_local_size(ctx, &local_size) == DTRAIN_OK && local_size == 1);
  CHECK(dtrain_allreduce_float(ctx, in, out, 3, DTRAIN_SUM) == DTRAIN_OK);
  CHECK(out[0] == 1.0f && out[1] == 2.0f && out[2] == 3.0f);
  CHECK(dtrain_allreduce_double(ctx, d, d, 2, DTRAIN_AVG) == DTRAIN_OK);
  CHECK(d[0] == 0.5 && d[1] == -4.0);
  CHECK(dtrain_barrier(ctx) == DTRAIN_OK);
  CHECK(strcmp(dtrain_last_error(), "") == 0);

  /* Errors: a code and a message, never a crash. */
  CHECK(dtrain_rank(ctx, NULL) == DTRAIN_ERR_INVALID);
  CHECK(strstr(dtrain_last_error(), "output pointer is NULL") != NULL);
  CHECK(dtrain_allreduce_float(ctx, in, out, 3, (dtrain_reduce_op_t)42) == DTRAIN_ERR_INVALID);
  CHECK(strstr(dtrain_last_error(), "reduce op 42 is unknown") != NULL);
  CHECK(dtrain_allreduce_float(NULL, in, out, 3, DTRAIN_SUM) == DTRAIN_ERR_INVALID);
  CHECK(dtrain_rank(ctx, &rank) == DTRAIN_OK && strcmp(dtrain_last_error(), "") == 0);

  CHECK(dtrain_finalize(ctx) == DTRAIN_OK);
  CHECK(dtrain_finalize(NULL) == DTRAIN_OK);
  if (failures == 0) printf("c_api_test: all checks passed\n");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
