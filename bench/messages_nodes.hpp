// messages_bench --nodes: ranks on several nodes (issue 43's figures across nodes). The link
// between the first two nodes as MPI sees it (link_rate.hpp); then send/recv of 64 MiB between
// rank 0 and the lowest rank on another node, alltoall and alltoallv of 64 MiB per rank, and
// gather and scatter of 16 MiB per rank to and from rank 0: dtrain's against Open MPI's in the
// same run, each against the link's limit (docs/benchmarks.md, "Across nodes" of the messages).
#pragma once

#include <dtrain/dtrain.hpp>
#include <vector>

namespace coll_bench {

// `hosts`: host_names(). Prints the table on rank 0 and adds it to `report["messages"]`; adds
// the elements that differ from what was sent to `total_wrong`.
void messages_nodes(dtrain::Comm& comm, const std::vector<char>& hosts);

}  // namespace coll_bench
