// The rank's place in the job as variables, the part of the launch contract dtrain itself writes.
// Apart from affinity's rank_env.hpp because it needs no topology: `dtrain run-rank` and the SPANK
// plugin write it whether or not they bind.
#pragma once

#include "launch/launcher_env.hpp"

namespace dtrain::launch {

// Where a rank sits in the job, as its launcher said.
struct RankPlace {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
};

// DTRAIN_RANK, DTRAIN_WORLD_SIZE, DTRAIN_LOCAL_RANK and DTRAIN_LOCAL_SIZE: what docs/spec.md
// promises every rank, whether `dtrain run-rank` or the SPANK plugin started it, so that a
// program (or a shell line) reads one set of names under either.
Environment rank_place_environment(const RankPlace& place);

}  // namespace dtrain::launch
