#include "bench_common.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

// coll_bench's #wrong: the sum of every rank's fill() is checked exactly, a reduce_scatter block at
// its own offset, an allgather block against its own rank's input, and one bad element counts.
namespace {

namespace cb = coll_bench;

class BenchCommon : public ::testing::Test {
 protected:
  void TearDown() override {
    cb::rank = 0;
    cb::size = 1;
  }
  // What each of `ranks` ranks fills `n` elements with.
  static std::vector<std::vector<float>> inputs(int ranks, std::size_t n) {
    cb::size = ranks;
    std::vector<std::vector<float>> in;
    for (cb::rank = 0; cb::rank < ranks; ++cb::rank) cb::fill(in.emplace_back(n));
    return in;
  }
  static std::vector<float> sum(const std::vector<std::vector<float>>& in) {
    std::vector<float> s(in[0].size(), 0.0f);
    for (const auto& v : in)
      for (std::size_t i = 0; i < v.size(); ++i) s[i] += v[i];
    return s;
  }
};

TEST_F(BenchCommon, TheSumOfEveryRanksFillIsExact) {
  std::vector<float> s = sum(inputs(4, 200));
  EXPECT_EQ(cb::wrong(s), 0);
  s[70] += 1.0f;
  EXPECT_EQ(cb::wrong(s), 1);
  EXPECT_EQ(cb::wrong(std::vector<float>(200, -1.0f)), 200);
}

TEST_F(BenchCommon, AReduceScatterBlockIsCheckedAtItsOffset) {
  constexpr std::size_t kCount = 100;  // not a multiple of fill's period, so the offset matters
  const std::vector<float> s = sum(inputs(4, 4 * kCount));
  const std::vector<float> block1(s.begin() + kCount, s.begin() + 2 * kCount);
  EXPECT_EQ(cb::wrong(block1, kCount), 0);
  EXPECT_GT(cb::wrong(block1, 0), 0);  // rank 0's block in rank 1's place
}

TEST_F(BenchCommon, AnAllgatherBlockMustBeItsRanksInput) {
  constexpr std::size_t kCount = 100;
  const auto in = inputs(3, kCount);
  std::vector<float> gathered;
  for (const auto& v : in) gathered.insert(gathered.end(), v.begin(), v.end());
  EXPECT_EQ(cb::wrong_gathered(gathered, kCount), 0);
  // Blocks 1 and 2 swapped: every element differs but the two where the pattern is 0 (i % 64 == 0).
  std::vector<float> swapped(gathered.begin(), gathered.begin() + kCount);
  swapped.insert(swapped.end(), in[2].begin(), in[2].end());
  swapped.insert(swapped.end(), in[1].begin(), in[1].end());
  EXPECT_EQ(cb::wrong_gathered(swapped, kCount), 2 * (kCount - 2));
  EXPECT_EQ(cb::wrong_gathered(gathered, 0), 3 * kCount);
}

}  // namespace
