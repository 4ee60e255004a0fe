#include "nodes_sweep.hpp"

#include <algorithm>
#include <cstdio>
#include <dtrain/bandwidth.hpp>
#include <string>
#include <utility>

#include "bench_common.hpp"
#include "link_rate.hpp"
#include "sweep_table.hpp"

namespace coll_bench {
namespace {

// The collectives of the three tables, float32 sum where they reduce, out of place; `nodes`: how
// many nodes the ranks are on (the limits are per node). `total`: S in elements.
constexpr auto kF32 = dtrain::DType::kFloat32;
constexpr auto kSum = dtrain::ReduceOp::kSum;

std::size_t block(std::size_t total) { return total / static_cast<std::size_t>(size); }
double node_share(int nodes) { return nodes > 1 ? (nodes - 1.0) / nodes : 0; }

Collective allreduce(int nodes) {
  return {
      .title = "allreduce float32 sum, out of place, tuned malloc; mpi: MPI_Allreduce",
      .json_key = "sweep",
      .first_bytes = 4096,
      .bus_factor = dtrain::allreduce_bus_factor(size),
      .link_share = 2 * node_share(nodes),
      .limit_why = std::to_string(nodes) +
                   " nodes: a node sends at least 2 (N - 1) / N of S, the bandwidth-optimal bound",
      .run = [](dtrain::Comm& c, const float* in, float* out,
                std::size_t total) { c.allreduce(in, out, total, kF32, kSum); },
      .run_mpi =
          [](const float* in, float* out, std::size_t total) {
            MPI_Allreduce(in, out, static_cast<int>(total), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
          },
      .wrong = [](const std::vector<float>& out, std::size_t) { return wrong(out); }};
}

// Reduce_scatter (after summing inside the node) and allgather alike: each node must send the
// other nodes' share of its data and receive its own, (N - 1) / N of S each way.
std::string block_limit_why(int nodes) {
  return std::to_string(nodes) +
         " nodes: each node sends the other nodes' share of its data and receives its own";
}

Collective reduce_scatter(int nodes) {
  return {.title =
              "reduce_scatter float32 sum, out of place, tuned malloc; S = the whole input "
              "(every rank's block); mpi: MPI_Reduce_scatter_block",
          .json_key = "reduce_scatter",
          .first_bytes = 4096,
          .bus_factor = dtrain::reduce_scatter_bus_factor(size),
          .link_share = node_share(nodes),
          .limit_why = block_limit_why(nodes),
          .out_is_block = true,
          .run = [](dtrain::Comm& c, const float* in, float* out,
                    std::size_t total) { c.reduce_scatter(in, out, block(total), kF32, kSum); },
          .run_mpi =
              [](const float* in, float* out, std::size_t total) {
                MPI_Reduce_scatter_block(in, out, static_cast<int>(block(total)), MPI_FLOAT,
                                         MPI_SUM, MPI_COMM_WORLD);
              },
          .wrong =
              [](const std::vector<float>& out, std::size_t total) {
                return wrong(out, static_cast<std::size_t>(rank) * block(total));
              }};
}

Collective allgather(int nodes) {
  return {.title =
              "allgather float32, out of place, tuned malloc; S = the whole output (every "
              "rank's block); mpi: MPI_Allgather",
          .json_key = "allgather",
          .first_bytes = 4096,
          .bus_factor = dtrain::allgather_bus_factor(size),
          .link_share = node_share(nodes),
          .limit_why = block_limit_why(nodes),
          .in_is_block = true,
          .run = [](dtrain::Comm& c, const float* in, float* out,
                    std::size_t total) { c.allgather(in, out, block(total), kF32); },
          .run_mpi =
              [](const float* in, float* out, std::size_t total) {
                const int n = static_cast<int>(block(total));
                MPI_Allgather(in, n, MPI_FLOAT, out, n, MPI_FLOAT, MPI_COMM_WORLD);
              },
          .wrong = [](const std::vector<float>& out,
                      std::size_t total) { return wrong_gathered(out, block(total)); }};
}

}  // namespace

void nodes_sweep(dtrain::Comm& comm, dtrain::Comm& flat, std::size_t max_bytes,
                 const std::vector<char>& hosts) {
  const auto [peer, nodes] = other_node(hosts);
  double one_way = 0;
  double both = 0;
  if (peer > 0) std::tie(one_way, both) = link_rates(peer);
  if (rank == 0) {
    std::printf(
        "# link rank 0 -> rank %d (MPI, 64 MiB): one-way %.4f GB/s, both ways at once %.4f "
        "GB/s each (%.2f x one-way)\n",
        peer, one_way, both, one_way > 0 ? both / one_way : 0);
    report["nodes"] = {{"nodes", nodes},
                       {"one_way_GBps", one_way},
                       {"both_ways_GBps", both},
                       {"transport", std::string(comm.allreduce_transport())}};
  }
  for (const Collective& op : {allreduce(nodes), reduce_scatter(nodes), allgather(nodes)})
    sweep_table(op, comm, flat, max_bytes, one_way);
}

}  // namespace coll_bench
