// An allgather in ceil(log2(p)) steps, for small ones, where the ring takes p - 1 (a split's
// agreement at 1,024 ranks: 10 steps, not 1,023): recursive doubling where p is a power of two
// (step k exchanges the 2^k blocks a rank holds with rank xor 2^k: the doubling allreduce's
// partners, so it opens no connection the barrier has not), else Bruck's (Bruck et al., 1997;
// MPICH's and Open MPI's choice for small allgathers: step k sends the blocks held to rank - 2^k
// and receives as many from rank + 2^k). Either way each rank sends p - 1 blocks in all, as in the
// ring, but waits on log2(p) messages, not p - 1. Apart from the transport, like RecursiveDoubling
// and Ring.
#pragma once

#include <cstddef>

#include "comm/algorithms/recursive_doubling.hpp"

namespace dtrain::runtime {

// Up to how many bytes in all (every rank's block) an allgather goes in log2(p) steps where the
// alternative is a ring that carries the same bytes over each link (the TCP backend's own, a
// group's): there the steps' wake-ups, not the bytes, are the time.
inline constexpr std::size_t kLogStepAllgatherUpTo = std::size_t{256} << 10;

// Up to how many bytes in all an allgather over `nodes` equal nodes of `local_size` ranks goes in
// log2(p) steps, flat, rather than by the hierarchy's ring among the nodes (nodes - 1 steps, each
// node's link carrying the others' blocks once): flat, every rank receives every block itself,
// local_size times the bytes over each node's link. So it pays while the steps it saves are worth
// more than the extra bytes: kBytesPerStep (log_step_allgather.cpp) for each step saved, divided
// among the local_size - 1 extra copies; at most kLogStepAllgatherUpTo, 0 where it saves none.
// 256 nodes of 4: 24 KiB (a split's agreement at 1,024 ranks) goes flat, 10 steps, not 255.
std::size_t log_step_allgather_up_to(int nodes, int local_size);

// Rank `rank` of `size` gathers every rank's `block_bytes` into `out` (rank r's at r *
// block_bytes); `in` may be this rank's own block of `out` (in place).
void log_step_allgather(int rank, int size, const RecursiveDoubling::Transfer& transfer,
                        const void* in, void* out, std::size_t block_bytes);

}  // namespace dtrain::runtime
