// coll_bench --nodes prints one table per collective (allreduce, reduce_scatter, allgather) with
// the same columns: dtrain as configured, dtrain flat, MPI's own call and the link's limit, with
// their ratios and #wrong. This is that table's loop, written once; each collective brings its
// three calls, its bandwidth factors and its exact check (nodes_sweep.cpp).
#pragma once

#include <cstddef>
#include <dtrain/dtrain.hpp>
#include <functional>
#include <string>
#include <vector>

namespace coll_bench {

// One collective of float32 over a buffer of S bytes, S being nccl-tests' size: the whole buffer
// (every rank's block), `total` elements, a multiple of the number of ranks.
struct Collective {
  std::string title;     // the table's first line, after "# "
  std::string json_key;  // its rows go to report["nodes"][json_key]
  std::size_t first_bytes = 0;
  double bus_factor = 0;      // busbw = S / t x bus_factor (dtrain/bandwidth.hpp)
  double link_share = 0;      // limit = link_share x S / one-way rate
  std::string limit_why;      // why a node must move that much, for the limit line
  bool in_is_block = false;   // the input holds this rank's block only (total / size elements)
  bool out_is_block = false;  // the output holds this rank's block only
  std::function<void(dtrain::Comm&, const float* in, float* out, std::size_t total)> run;
  std::function<void(const float* in, float* out, std::size_t total)> run_mpi;
  // Elements of `out` that differ from the exact result, `in` having been fill()ed.
  std::function<long long(const std::vector<float>& out, std::size_t total)> wrong;
};

// The sweep S = first_bytes, x4, .. max_bytes (each S rounded down to a multiple of 4 x size):
// `comm`, `flat` and MPI timed on the same buffers; rows printed by rank 0 and added to
// report["nodes"][op.json_key], #wrong (all ranks, all three) to total_wrong. `one_way`: the
// link's one-way rate in GB/s, 0 when every rank is on one node (no limit).
void sweep_table(const Collective& op, dtrain::Comm& comm, dtrain::Comm& flat,
                 std::size_t max_bytes, double one_way);

}  // namespace coll_bench
