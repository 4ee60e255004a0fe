// The per-epoch shuffle behind dtrain::Shard: a keyed bijection of [0, n) computed one position at
// a time, so each rank evaluates only its own share (O(n / world) time, no O(n) table) and every
// machine computes the same order from (seed, epoch).
//
// Construction: a balanced Feistel network over [0, 2^k) (k even, the smallest with 2^k >= n),
// 6 rounds whose round function is the SplitMix64 finalizer of the right half xor a round key;
// positions that land outside [0, n) are walked through the network again ("cycle walking"), which
// keeps it a bijection of [0, n). The round keys come from SplitMix64 seeded with (seed, epoch).
// Only integer arithmetic of fixed width: no std:: distribution, whose results differ between
// standard libraries.
#pragma once

#include <array>
#include <cstdint>

namespace dtrain::runtime {

inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// SplitMix64 (Steele, Lea, Flood 2014): the next value of the sequence in `state`.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  state += 0x9e3779b97f4a7c15ULL;
  return mix64(state);
}

class Permutation {
 public:
  static constexpr int kRounds = 6;

  Permutation(std::uint64_t n, std::uint64_t seed, std::uint64_t epoch) : n_(n) {
    int bits = 2;
    while (bits < 64 && (std::uint64_t{1} << bits) < n) bits += 2;
    half_bits_ = bits / 2;
    half_mask_ = (std::uint64_t{1} << half_bits_) - 1;
    std::uint64_t state = seed ^ mix64(epoch + 0x632be59bd9b4e019ULL);
    for (auto& key : keys_) key = splitmix64(state);
  }

  // The position-th element of the permutation; position < n.
  std::uint64_t operator()(std::uint64_t position) const {
    std::uint64_t x = position;
    do {
      x = encrypt(x);
    } while (x >= n_);
    return x;
  }

 private:
  std::uint64_t encrypt(std::uint64_t x) const {
    std::uint64_t left = (x >> half_bits_) & half_mask_;
    std::uint64_t right = x & half_mask_;
    for (std::uint64_t key : keys_) {
      const std::uint64_t next = left ^ (mix64(right ^ key) & half_mask_);
      left = right;
      right = next;
    }
    return (left << half_bits_) | right;
  }

  std::uint64_t n_;
  int half_bits_ = 1;
  std::uint64_t half_mask_ = 1;
  std::array<std::uint64_t, kRounds> keys_{};
};

}  // namespace dtrain::runtime
