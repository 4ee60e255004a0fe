// The property the example's "same global batch, same curve" promise rests on: with libdtrain's
// Shard, the local batches of step k on all ranks together are exactly global batch k of one rank.
#include <dtrain/shard.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace {

std::vector<std::uint64_t> global_batch(const dtrain::Shard& one, std::uint64_t epoch,
                                        std::size_t step, std::size_t batch) {
  const auto all = one.indices(epoch);
  std::vector<std::uint64_t> out(all.begin() + static_cast<std::ptrdiff_t>(step * batch),
                                 all.begin() + static_cast<std::ptrdiff_t>((step + 1) * batch));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(GlobalBatch, RanksTogetherHoldTheSamplesOfOneRank) {
  const std::uint64_t samples = 1003;  // not a multiple of anything used here
  const dtrain::ShardOptions options{
      .shuffle = true, .seed = 2026, .tail = dtrain::ShardTail::kDrop};
  const dtrain::Shard one(samples, 0, 1, options);
  for (int world : {2, 4}) {
    const std::size_t batch = 8 * static_cast<std::size_t>(world);
    const std::size_t local = batch / static_cast<std::size_t>(world);
    for (std::uint64_t epoch : {0u, 3u}) {
      for (std::size_t step = 0; step < samples / batch; ++step) {
        std::vector<std::uint64_t> together;
        for (int rank = 0; rank < world; ++rank) {
          const auto mine = dtrain::Shard(samples, rank, world, options).indices(epoch);
          together.insert(together.end(), mine.begin() + static_cast<std::ptrdiff_t>(step * local),
                          mine.begin() + static_cast<std::ptrdiff_t>((step + 1) * local));
        }
        std::sort(together.begin(), together.end());
        ASSERT_EQ(together, global_batch(one, epoch, step, batch))
            << world << " ranks, epoch " << epoch << ", step " << step;
      }
    }
  }
}

TEST(GlobalBatch, EpochsAreShuffledDifferently) {
  const dtrain::Shard one(1000, 0, 1,
                          {.shuffle = true, .seed = 2026, .tail = dtrain::ShardTail::kDrop});
  EXPECT_NE(one.indices(0), one.indices(1));
  EXPECT_EQ(one.indices(1), one.indices(1));
}

}  // namespace
