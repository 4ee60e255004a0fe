// The link between two nodes as MPI sees it, for the benchmarks that judge libdtrain against a
// link's limit (coll_bench --nodes, messages_bench --nodes; docs/benchmarks.md "Across nodes").
#pragma once

#include <utility>
#include <vector>

namespace coll_bench {

// `hosts`: every rank's host name, 256 bytes each, by rank (what host_names() returns).
// The lowest rank on another host than rank 0's, -1 when every rank is on rank 0's; and the
// number of hosts.
std::pair<int, int> other_node(const std::vector<char>& hosts);
// GB/s from rank 0 to `peer` (one way) and each way while both send (MPI_Sendrecv), 64 MiB in
// 4 MiB messages, median of 3; every rank returns rank 0's figures. Collective over
// MPI_COMM_WORLD.
std::pair<double, double> link_rates(int peer);
// Every rank's host name (gethostname), 256 bytes each, by rank. Collective over MPI_COMM_WORLD.
std::vector<char> host_names();

}  // namespace coll_bench
