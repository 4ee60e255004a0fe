/* The C ABI of Shard, Checkpointer and Preemption from a C compiler (C11, -Wpedantic): values and
 * messages as a C caller sees them. Argument: a scratch directory that does not exist yet. */
/* SIGUSR1 is POSIX, not C11. */
#define _POSIX_C_SOURCE 200809L

#include <dtrain/dtrain.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: c_api_checkpoint_test SCRATCH_DIR\n");
    return 2;
  }
  dtrain_context_t* ctx = NULL;
  if (dtrain_init(&ctx) != DTRAIN_OK) {
    fprintf(stderr, "dtrain_init: %s\n", dtrain_last_error());
    return 1;
  }

  /* Shard: 10 samples, rank 1 of 3, no shuffle, padded: 1 4 7 0. */
  dtrain_shard_t* shard = NULL;
  CHECK(dtrain_shard_create(10, 1, 3, 0, 0, DTRAIN_SHARD_PAD, &shard) == DTRAIN_OK);
  uint64_t n = 0;
  CHECK(dtrain_shard_size(shard, &n) == DTRAIN_OK && n == 4);
  uint64_t idx[4] = {0};
  size_t written = 0;
  CHECK(dtrain_shard_indices(shard, 0, 1, idx, 4, &written) == DTRAIN_OK);
  CHECK(written == 3 && idx[0] == 4 && idx[1] == 7 && idx[2] == 0);
  CHECK(dtrain_shard_indices(shard, 0, 0, idx, 2, &written) == DTRAIN_ERR_INVALID);
  CHECK(strcmp(dtrain_last_error(),
               "dtrain: dtrain_shard_indices: capacity; expected at least 4 entries, got 2") == 0);
  CHECK(dtrain_shard_free(shard) == DTRAIN_OK);
  CHECK(dtrain_shard_create(10, 3, 3, 1, 0, DTRAIN_SHARD_PAD, &shard) == DTRAIN_ERR_INVALID);
  CHECK(shard == NULL);
  CHECK(strcmp(dtrain_last_error(), "dtrain: shard: rank; expected 0 to 2, got 3") == 0);

  /* Checkpointer: nothing, then a save, then the same bytes back. */
  dtrain_checkpointer_t* ckpt = NULL;
  CHECK(dtrain_checkpointer_create(ctx, argv[1], 2, &ckpt) == DTRAIN_OK);
  dtrain_checkpoint_t* c = (dtrain_checkpoint_t*)1;
  CHECK(dtrain_checkpointer_load_latest(ckpt, &c) == DTRAIN_OK && c == NULL);
  const char state[] = "weights";
  const char mine[] = "rng";
  CHECK(dtrain_checkpointer_save(ckpt, 12, state, sizeof state, mine, 3) == DTRAIN_OK);
  CHECK(dtrain_checkpointer_load_latest(ckpt, &c) == DTRAIN_OK && c != NULL);
  int64_t step = -1;
  const void* data = NULL;
  size_t size = 0;
  CHECK(dtrain_checkpoint_step(c, &step) == DTRAIN_OK && step == 12);
  CHECK(dtrain_checkpoint_data(c, &data, &size) == DTRAIN_OK && size == sizeof state &&
        memcmp(data, state, size) == 0);
  CHECK(dtrain_checkpoint_rank_data(c, &data, &size) == DTRAIN_OK && size == 3 &&
        memcmp(data, "rng", 3) == 0);
  CHECK(dtrain_checkpoint_free(c) == DTRAIN_OK);
  CHECK(dtrain_checkpointer_save(ckpt, -2, state, sizeof state, NULL, 0) == DTRAIN_ERR_INVALID);
  CHECK(strcmp(dtrain_last_error(), "dtrain: checkpoint: save: step; expected 0 or more, got -2") ==
        0);
  CHECK(dtrain_checkpointer_save(ckpt, 13, NULL, 5, NULL, 0) == DTRAIN_ERR_INVALID);
  CHECK(strcmp(dtrain_last_error(),
               "dtrain: dtrain_checkpointer_save: data is NULL; expected a valid pointer") == 0);
  CHECK(dtrain_checkpointer_free(ckpt) == DTRAIN_OK);

  /* A save below the newest step is refused unless the caller asks to discard the newer ones. */
  CHECK(dtrain_checkpointer_create(ctx, argv[1], 2, &ckpt) == DTRAIN_OK);
  CHECK(dtrain_checkpointer_save(ckpt, 3, state, sizeof state, NULL, 0) == DTRAIN_ERR_INVALID);
  CHECK(strstr(dtrain_last_error(), "holds a newer checkpoint") != NULL);
  CHECK(dtrain_checkpointer_free(ckpt) == DTRAIN_OK);
  CHECK(dtrain_checkpointer_create_with_flags(ctx, argv[1], 2, 4u, &ckpt) == DTRAIN_ERR_INVALID);
  CHECK(ckpt == NULL);
  CHECK(dtrain_checkpointer_create_with_flags(ctx, argv[1], 2, DTRAIN_CHECKPOINT_DISCARD_NEWER,
                                              &ckpt) == DTRAIN_OK);
  CHECK(dtrain_checkpointer_save(ckpt, 3, state, sizeof state, NULL, 0) == DTRAIN_OK);
  CHECK(dtrain_checkpointer_load_latest(ckpt, &c) == DTRAIN_OK && c != NULL);
  CHECK(dtrain_checkpoint_step(c, &step) == DTRAIN_OK && step == 3);
  CHECK(dtrain_checkpoint_free(c) == DTRAIN_OK);
  CHECK(dtrain_checkpointer_free(ckpt) == DTRAIN_OK);

  /* Preemption: a signal to this process stops it. */
  dtrain_preemption_t* p = NULL;
  int stop = -1;
  CHECK(dtrain_preemption_create(ctx, &p) == DTRAIN_OK);
  CHECK(dtrain_preemption_should_stop(p, &stop) == DTRAIN_OK && stop == 0);
  raise(SIGUSR1);
  CHECK(dtrain_preemption_should_stop(p, &stop) == DTRAIN_OK && stop == 1);
  CHECK(dtrain_preemption_free(p) == DTRAIN_OK);
  CHECK(DTRAIN_EXIT_REQUEUE == 85);

  dtrain_finalize(ctx);
  if (failures == 0) printf("c_api_checkpoint_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
