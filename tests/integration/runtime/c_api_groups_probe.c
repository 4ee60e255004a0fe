/* Sub-communicators through the C ABI (dtrain_split, dtrain_subgroup, dtrain_subgroup_numbered,
 * dtrain_group_free), from C11, on 4 ranks: a 2 x 2 grid of "row" and "column" groups by split, a
 * subgroup {3, 0} (reversed order), a numbered subgroup {2, 1} that rank 2 makes before
 * rank 1 makes it (made without a message) and a split of a group, each handle taking the functions
 * a ctx takes (rank, size, collectives, messages, rooted, alltoallv) in its own numbering, every
 * result exact; then the refusals: finalize of a group, group_free of the job's handle, a
 * checkpointer on a group, a bad color, a number given twice or out of range, a negative timeout.
 * Prints "c_api_groups_probe: rank R: ok" or each failure and exits 1. */
#include <dtrain/dtrain.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;
static int world_rank = -1;

#define CHECK(cond)                                                                               \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "c_api_groups_probe: rank %d: line %d: CHECK(%s) failed; last error: %s\n", \
              world_rank, __LINE__, #cond, dtrain_last_error());                                  \
      ++failures;                                                                                 \
    }                                                                                             \
  } while (0)

/* Every kind of call on group `g`, whose members are `world_of[0 .. n - 1]` in group order. */
static void every_call(dtrain_context_t* g, const int* world_of, int n) {
  int rank = -1, size = -1, local_size = -1, i;
  CHECK(dtrain_rank(g, &rank) == DTRAIN_OK && rank >= 0 && rank < n);
  CHECK(dtrain_size(g, &size) == DTRAIN_OK && size == n);
  CHECK(rank >= 0 && rank < n && world_of[rank] == world_rank);
  CHECK(dtrain_local_size(g, &local_size) == DTRAIN_OK && local_size == 4); /* the node's */
  if (rank < 0 || rank >= n) return;
  {
    double x[3] = {rank + 1.0, 1.0, (double)world_rank};
    CHECK(dtrain_allreduce(g, x, x, 3, DTRAIN_FLOAT64, DTRAIN_SUM) == DTRAIN_OK);
    CHECK(x[0] == n * (n + 1) / 2.0 && x[1] == n);
  }
  {
    int64_t b = rank == n - 1 ? 4242 : 0;
    CHECK(dtrain_broadcast(g, &b, 1, DTRAIN_INT64, n - 1) == DTRAIN_OK && b == 4242);
  }
  {
    int32_t mine = world_rank, all[4] = {-1, -1, -1, -1};
    CHECK(dtrain_allgather(g, &mine, all, 1, DTRAIN_INT32) == DTRAIN_OK);
    for (i = 0; i < n; ++i) CHECK(all[i] == world_of[i]);
  }
  {
    /* Group rank 0 sends each other member its group rank, tagged; any source names rank 0. */
    int32_t got = -1;
    int source = -2;
    if (rank == 0) {
      for (i = 1; i < n; ++i) {
        int32_t v = i * 10;
        CHECK(dtrain_send(g, &v, 1, DTRAIN_INT32, i, 7) == DTRAIN_OK);
      }
    } else {
      CHECK(dtrain_recv(g, &got, 1, DTRAIN_INT32, DTRAIN_ANY_SOURCE, 7, &source) == DTRAIN_OK);
      CHECK(got == rank * 10 && source == 0);
    }
  }
  {
    /* alltoallv: rank r sends r + q + 1 elements to q, each the value 100 r + q. */
    int32_t in[16], out[16];
    size_t sc[4], so[4], rc[4], ro[4], at = 0, q;
    int k;
    for (q = 0; q < (size_t)n; ++q) {
      sc[q] = (size_t)rank + q + 1;
      so[q] = at;
      for (k = 0; k < (int)sc[q]; ++k) in[at + (size_t)k] = 100 * rank + (int32_t)q;
      at += sc[q];
    }
    at = 0;
    for (q = 0; q < (size_t)n; ++q) {
      rc[q] = q + (size_t)rank + 1;
      ro[q] = at;
      at += rc[q];
    }
    CHECK(dtrain_alltoallv(g, in, sc, so, out, rc, ro, DTRAIN_INT32) == DTRAIN_OK);
    for (q = 0; q < (size_t)n; ++q) {
      CHECK(out[ro[q]] == 100 * (int32_t)q + rank && out[ro[q] + rc[q] - 1] == out[ro[q]]);
    }
  }
  {
    int64_t mine = world_rank, gathered[4] = {-1, -1, -1, -1};
    CHECK(dtrain_gather(g, &mine, rank == 0 ? gathered : NULL, 1, DTRAIN_INT64, 0) == DTRAIN_OK);
    if (rank == 0) {
      for (i = 0; i < n; ++i) CHECK(gathered[i] == world_of[i]);
    }
  }
  CHECK(dtrain_barrier(g) == DTRAIN_OK);
}

int main(void) {
  dtrain_context_t* ctx = NULL;
  dtrain_context_t *row = NULL, *column = NULL, *ends = NULL, *half = NULL, *numbered = NULL;
  int size = 0;
  if (dtrain_init(&ctx) != DTRAIN_OK) {
    fprintf(stderr, "c_api_groups_probe: dtrain_init: %s\n", dtrain_last_error());
    return 1;
  }
  CHECK(dtrain_rank(ctx, &world_rank) == DTRAIN_OK);
  CHECK(dtrain_size(ctx, &size) == DTRAIN_OK && size == 4);
  if (size != 4) return 1;
  {
    /* Rows {0, 1}, {2, 3}; columns by key -rank: {2, 0}, {3, 1}. */
    const int row_of[2][2] = {{0, 1}, {2, 3}};
    const int column_of[2][2] = {{2, 0}, {3, 1}};
    CHECK(dtrain_split(ctx, world_rank / 2, world_rank, &row) == DTRAIN_OK && row != NULL);
    CHECK(dtrain_split(ctx, world_rank % 2, -world_rank, &column) == DTRAIN_OK && column != NULL);
    if (row != NULL) every_call(row, row_of[world_rank / 2], 2);
    if (column != NULL) every_call(column, column_of[world_rank % 2], 2);
  }
  {
    const int members[2] = {3, 0};
    CHECK(dtrain_subgroup(ctx, members, 2, &ends) == DTRAIN_OK);
    CHECK((ends != NULL) == (world_rank == 0 || world_rank == 3));
    if (ends != NULL) every_call(ends, members, 2);
  }
  {
    /* Numbered: rank 2 makes the group and only then lets rank 1 make it (a message on the job's
     * handle): a making that waited for the members would wait here until DTRAIN_TIMEOUT. */
    const int pair[2] = {2, 1};
    int32_t go = 1;
    if (world_rank == 1) CHECK(dtrain_recv(ctx, &go, 1, DTRAIN_INT32, 2, 3, NULL) == DTRAIN_OK);
    CHECK(dtrain_subgroup_numbered(ctx, pair, 2, 7, 60000, &numbered) == DTRAIN_OK);
    if (world_rank == 2) CHECK(dtrain_send(ctx, &go, 1, DTRAIN_INT32, 1, 3) == DTRAIN_OK);
    CHECK((numbered != NULL) == (world_rank == 1 || world_rank == 2));
    if (numbered != NULL) every_call(numbered, pair, 2);
  }
  {
    /* A group of a group: the row's rank 0 alone, the other joining none. */
    int row_rank = -1;
    CHECK(dtrain_rank(row, &row_rank) == DTRAIN_OK);
    CHECK(dtrain_split(row, row_rank == 0 ? 0 : DTRAIN_NO_GROUP, 0, &half) == DTRAIN_OK);
    CHECK((half != NULL) == (row_rank == 0));
    if (half != NULL) {
      const int me[1] = {world_rank};
      every_call(half, me, 1);
    }
  }
  {
    dtrain_checkpointer_t* ckpt = NULL;
    dtrain_context_t* none = NULL;
    const int twice[2] = {1, 1};
    CHECK(dtrain_finalize(row) == DTRAIN_ERR_INVALID &&
          strstr(dtrain_last_error(),
                 "dtrain: dtrain_finalize: ctx is a group's (dtrain_split, "
                 "dtrain_subgroup); expected the handle dtrain_init "
                 "returned") != NULL);
    CHECK(dtrain_group_free(ctx) == DTRAIN_ERR_INVALID &&
          strstr(dtrain_last_error(),
                 "dtrain: dtrain_group_free: group is dtrain_init's "
                 "handle; expected a group's") != NULL);
    CHECK(dtrain_checkpointer_create(row, "/nonexistent", 1, &ckpt) == DTRAIN_ERR_INVALID &&
          ckpt == NULL &&
          strstr(dtrain_last_error(), "dtrain: dtrain_checkpointer_create: ctx is a group's") !=
              NULL);
    CHECK(dtrain_subgroup(ctx, twice, 2, &none) == DTRAIN_ERR_INVALID && none == NULL &&
          strcmp(dtrain_last_error(),
                 "dtrain: subgroup: ranks: 1 appears twice; expected each rank once") == 0);
    if (world_rank == 1 || world_rank == 2) {
      const int pair[2] = {2, 1};
      CHECK(dtrain_subgroup_numbered(ctx, pair, 2, 7, 0, &none) == DTRAIN_ERR_INVALID &&
            none == NULL &&
            strstr(dtrain_last_error(),
                   "dtrain: subgroup: number 7 was given to an earlier group of this Context") !=
                NULL);
    }
    CHECK(dtrain_subgroup_numbered(ctx, twice, 1, -1, 0, &none) == DTRAIN_ERR_INVALID &&
          none == NULL &&
          strcmp(dtrain_last_error(),
                 "dtrain: subgroup: number; expected 0 to 1073741822, got -1") == 0);
    CHECK(dtrain_subgroup_numbered(ctx, twice, 1, 8, -5, &none) == DTRAIN_ERR_INVALID &&
          none == NULL &&
          strcmp(dtrain_last_error(),
                 "dtrain: dtrain_subgroup_numbered: timeout_ms; expected 0 (the job's deadline) "
                 "or more, got -5") == 0);
    CHECK(dtrain_split(ctx, -3, 0, &none) == DTRAIN_ERR_INVALID && none == NULL &&
          strcmp(dtrain_last_error(),
                 "dtrain: split: color; expected 0 or more, or kNoGroup (-1), got -3") == 0);
  }
  /* The groups still work after the refusals, and the job's handle beside them. */
  {
    int32_t x = 1;
    CHECK(dtrain_allreduce(row, &x, &x, 1, DTRAIN_INT32, DTRAIN_SUM) == DTRAIN_OK && x == 2);
    x = 1;
    CHECK(dtrain_allreduce(ctx, &x, &x, 1, DTRAIN_INT32, DTRAIN_SUM) == DTRAIN_OK && x == 4);
  }
  CHECK(dtrain_group_free(half) == DTRAIN_OK);
  CHECK(dtrain_group_free(numbered) == DTRAIN_OK);
  CHECK(dtrain_group_free(ends) == DTRAIN_OK);
  CHECK(dtrain_group_free(column) == DTRAIN_OK);
  CHECK(dtrain_group_free(row) == DTRAIN_OK);
  CHECK(dtrain_group_free(NULL) == DTRAIN_OK);
  CHECK(dtrain_barrier(ctx) == DTRAIN_OK);
  if (failures == 0) printf("c_api_groups_probe: rank %d: ok\n", world_rank);
  CHECK(dtrain_finalize(ctx) == DTRAIN_OK);
  return failures == 0 ? 0 : 1;
}
