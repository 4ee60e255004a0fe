// coll_bench --nodes (issue 21): ranks on several nodes. The link between the first two nodes as
// MPI sees it, then the allreduce, reduce_scatter and allgather sweeps of dtrain as configured,
// dtrain flat and MPI's own call against the link's limit (docs/benchmarks.md, "Across nodes").
#pragma once

#include <cstddef>
#include <dtrain/dtrain.hpp>
#include <vector>

namespace coll_bench {

// `hosts`: every rank's host name, 256 bytes each, by rank. Adds rows to `report` and #wrong to
// `total_wrong`; `max_bytes`: the largest S of every table.
void nodes_sweep(dtrain::Comm& comm, dtrain::Comm& flat, std::size_t max_bytes,
                 const std::vector<char>& hosts);

}  // namespace coll_bench
