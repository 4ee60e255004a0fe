/* The C ABI from a C compiler, against an installed libdtrain. */
#include <dtrain/dtrain.h>
#include <stdio.h>

int main(void) {
  dtrain_context_t* ctx = NULL;
  if (dtrain_init(&ctx) != DTRAIN_OK) {
    fprintf(stderr, "consumer_c: %s\n", dtrain_last_error());
    return 1;
  }
  int size = 0;
  float values[2] = {1.0f, 4.0f};
  if (dtrain_size(ctx, &size) != DTRAIN_OK ||
      dtrain_allreduce_float(ctx, values, values, 2, DTRAIN_AVG) != DTRAIN_OK) {
    fprintf(stderr, "consumer_c: %s\n", dtrain_last_error());
    return 1;
  }
  if (values[0] != 1.0f || values[1] != 4.0f) {
    fprintf(stderr, "consumer_c: wrong average %g %g\n", values[0], values[1]);
    return 1;
  }
  printf("consumer_c ok: %d rank(s)\n", size);
  dtrain_finalize(ctx);
  return 0;
}
