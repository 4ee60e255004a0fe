#include "comm/algorithms/log_step_allgather.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace dtrain::runtime {
namespace {

// What one step of a schedule across nodes is worth in bytes on a node's link: a small message's
// latency on TCP across nodes (tens of us) times the link's rate, 4 KiB at 1 Gbit/s (33 us), the
// namespace cluster's and the slowest link our users run on. Faster links make a step worth more
// bytes, so this errs towards the hierarchy, the path before this one.
constexpr std::size_t kBytesPerStep = std::size_t{4} << 10;

// p a power of two: after step k a rank holds the 2^(k+1) blocks of its aligned run, in place.
void doubling_allgather(std::size_t rank, std::size_t p,
                        const RecursiveDoubling::Transfer& transfer, char* out,
                        std::size_t block_bytes) {
  for (std::size_t have = 1; have < p; have *= 2) {
    const std::size_t peer = rank ^ have;
    const std::size_t mine = rank & ~(have - 1);  // the first block of the run this rank holds
    const std::size_t theirs = peer & ~(have - 1);
    transfer(out + mine * block_bytes, have * block_bytes, static_cast<int>(peer),
             out + theirs * block_bytes, have * block_bytes, static_cast<int>(peer));
  }
}

// Any p: worked in `out` rotated, block i there rank (rank + i) mod p's, so that what a rank holds
// is always its first blocks, sent whole, and what it receives lands right after them.
void bruck_allgather(std::size_t rank, std::size_t p, const RecursiveDoubling::Transfer& transfer,
                     char* out, std::size_t block_bytes) {
  std::memmove(out, out + rank * block_bytes, block_bytes);
  for (std::size_t have = 1; have < p; have *= 2) {
    const std::size_t n = std::min(have, p - have);
    transfer(out, n * block_bytes, static_cast<int>((rank + p - have) % p),
             out + have * block_bytes, n * block_bytes, static_cast<int>((rank + have) % p));
  }
  // Back to rank order: block i moves to (rank + i) mod p.
  std::rotate(out, out + (p - rank) * block_bytes, out + p * block_bytes);
}

}  // namespace

std::size_t log_step_allgather_up_to(int nodes, int local_size) {
  // ceil(log2(p)) steps flat: the bits of p - 1.
  const int flat_steps =
      static_cast<int>(std::bit_width(static_cast<unsigned>(nodes * local_size - 1)));
  const int saved = nodes - 1 - flat_steps;
  if (saved <= 0 || local_size < 1) return 0;
  const std::size_t worth = kBytesPerStep * static_cast<std::size_t>(saved);
  return std::min(kLogStepAllgatherUpTo,
                  worth / static_cast<std::size_t>(std::max(1, local_size - 1)));
}

void log_step_allgather(int rank, int size, const RecursiveDoubling::Transfer& transfer,
                        const void* in, void* out, std::size_t block_bytes) {
  char* o = static_cast<char*>(out);
  const auto r = static_cast<std::size_t>(rank);
  const auto p = static_cast<std::size_t>(size);
  std::memmove(o + r * block_bytes, in, block_bytes);
  if (std::has_single_bit(p)) {
    doubling_allgather(r, p, transfer, o, block_bytes);
  } else {
    bruck_allgather(r, p, transfer, o, block_bytes);
  }
}

}  // namespace dtrain::runtime
