// One POSIX shared-memory object per node for the TCP backend's shared-memory paths (every rank
// on one host, or each node's reduction in the hierarchy), set up over the backend's own
// connections: the node's first member creates the object and sends its name to the others,
// which open it; once all have it, it is unlinked, so nothing is left behind however the job
// ends. Apart from tcp_communicator.cpp so that one definition serves both paths and is tested
// with threads as ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "comm/transport/shm/posix_shm.hpp"

namespace dtrain::runtime {

// What the set-up needs of the ranks' connections.
struct NodeMemoryLinks {
  // Collective over every rank of the job: the least of every rank's `value`.
  std::function<std::int32_t(std::int32_t value)> least;
  // To or from one member of this node, whole, or throw.
  std::function<void(int peer, const void* buf, std::size_t bytes)> send;
  std::function<void(int peer, void* buf, std::size_t bytes)> recv;
  // Collective over every rank of the job.
  std::function<void()> barrier;
};

// Collective over every rank: the ranks `members` of each node (this rank's node, in rank order,
// `rank` among them) map one object into `memory`, a ShmAllreduce segment with pieces of
// `piece_bytes` per member, each prepared by its owner before any rank returns, and get the
// segments by member. When some rank cannot create or open its node's object, every rank gets
// none (the caller keeps to its sockets).
std::vector<char*> map_node_memory(int rank, const std::vector<int>& members,
                                   std::size_t piece_bytes, const NodeMemoryLinks& links,
                                   PosixShm& memory);

}  // namespace dtrain::runtime
