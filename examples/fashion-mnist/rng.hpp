// The example's only source of randomness: splitmix64 to seed, xoshiro256+ to draw. Written out
// rather than taken from <random> because the standard distributions are not specified bit for
// bit, and the example promises the same weights and the same data order on every machine.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

namespace fmnist {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& word : s_) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word = z ^ (z >> 31);
    }
  }

  std::uint64_t next() {
    const std::uint64_t result = s_[0] + s_[3];
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = (s_[3] << 45) | (s_[3] >> 19);
    return result;
  }

  // Uniform in [0, bound) for bound <= 2^32: Lemire's multiply-shift on 32 random bits, without
  // rejection. The bias is below bound / 2^32 (1.4e-5 for 60,000 samples), and a fixed draw count
  // keeps the stream reproducible.
  std::uint32_t below(std::uint32_t bound) {
    return static_cast<std::uint32_t>(((next() >> 32) * bound) >> 32);
  }

  // Uniform in (0, 1].
  double unit() { return (static_cast<double>(next() >> 11) + 1.0) * 0x1.0p-53; }

  // Standard normal (Box-Muller; the second value is discarded to keep the stream simple).
  double normal() {
    const double u = unit();
    const double v = unit();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
  }

 private:
  std::uint64_t s_[4];
};

}  // namespace fmnist
