// Properties of dtrain::Shard over many (N, world, options): coverage, equal counts, disjointness,
// determinism, per-epoch orders, resume; plus DistributedSampler's exact layout on small cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "dtrain/shard.hpp"

namespace {

using dtrain::Shard;
using dtrain::ShardOptions;
using dtrain::ShardTail;

// Every rank's list for one epoch.
std::vector<std::vector<std::uint64_t>> all_ranks(std::uint64_t n, int world, ShardOptions o,
                                                  std::uint64_t epoch) {
  std::vector<std::vector<std::uint64_t>> out;
  for (int r = 0; r < world; ++r) out.push_back(Shard(n, r, world, o).indices(epoch));
  return out;
}

struct Case {
  std::uint64_t n;
  int world;
};
const std::vector<Case> kCases = {{0, 1},  {1, 1},  {1, 4},   {3, 4},   {7, 2},    {10, 3},
                                  {16, 4}, {17, 4}, {97, 8},  {100, 7}, {1000, 1}, {1023, 16},
                                  {5, 5},  {2, 3},  {64, 64}, {65, 64}};

ShardOptions opts(bool shuffle, ShardTail tail, std::uint64_t seed = 7) {
  return ShardOptions{shuffle, seed, tail};
}

TEST(Shard, PadCoversEverySampleAndGivesEqualCounts) {
  for (const auto& c : kCases) {
    for (bool shuffle : {false, true}) {
      const auto ranks = all_ranks(c.n, c.world, opts(shuffle, ShardTail::kPad), 3);
      std::set<std::uint64_t> seen;
      const std::size_t expected = (c.n + c.world - 1) / c.world;
      for (const auto& r : ranks) {
        EXPECT_EQ(r.size(), expected) << "n=" << c.n << " world=" << c.world;
        for (auto i : r) {
          EXPECT_LT(i, c.n);
          seen.insert(i);
        }
      }
      EXPECT_EQ(seen.size(), c.n) << "n=" << c.n << " world=" << c.world << " shuffle=" << shuffle;
    }
  }
}

TEST(Shard, PaddingRepeatsOnlyAsManySamplesAsNeeded) {
  for (const auto& c : kCases) {
    if (c.n == 0) continue;
    const auto ranks = all_ranks(c.n, c.world, opts(true, ShardTail::kPad), 1);
    std::map<std::uint64_t, int> count;
    for (const auto& r : ranks)
      for (auto i : r) ++count[i];
    const std::uint64_t total = ((c.n + c.world - 1) / c.world) * c.world;
    std::uint64_t extra = 0;
    for (const auto& [i, k] : count) extra += static_cast<std::uint64_t>(k - 1);
    EXPECT_EQ(extra, total - c.n) << "n=" << c.n << " world=" << c.world;
  }
}

TEST(Shard, DropAndExactOnceAreDisjoint) {
  for (const auto& c : kCases) {
    for (auto tail : {ShardTail::kDrop, ShardTail::kExactOnce}) {
      const auto ranks = all_ranks(c.n, c.world, opts(true, tail), 2);
      std::set<std::uint64_t> seen;
      std::size_t total = 0;
      for (const auto& r : ranks) {
        total += r.size();
        seen.insert(r.begin(), r.end());
      }
      EXPECT_EQ(seen.size(), total) << "a sample on two ranks, n=" << c.n << " world=" << c.world;
      if (tail == ShardTail::kDrop) {
        EXPECT_EQ(total, (c.n / c.world) * c.world);
        for (const auto& r : ranks) EXPECT_EQ(r.size(), c.n / c.world);
      } else {
        EXPECT_EQ(total, c.n) << "exact-once must cover every sample once";
        for (int r = 0; r < c.world; ++r) {
          EXPECT_EQ(ranks[r].size(), Shard(c.n, r, c.world, opts(true, tail)).size());
          // Counts differ by at most one, the lower ranks taking the extra samples.
          EXPECT_EQ(ranks[r].size(),
                    c.n / c.world + (static_cast<std::uint64_t>(r) < c.n % c.world));
        }
      }
    }
  }
}

TEST(Shard, DistributedSamplerLayoutWithoutShuffle) {
  // torch: indices 0..9 padded to 12 by wrapping (0, 1), rank r takes r::3.
  const ShardOptions o = opts(false, ShardTail::kPad);
  EXPECT_EQ(Shard(10, 0, 3, o).indices(0), (std::vector<std::uint64_t>{0, 3, 6, 9}));
  EXPECT_EQ(Shard(10, 1, 3, o).indices(0), (std::vector<std::uint64_t>{1, 4, 7, 0}));
  EXPECT_EQ(Shard(10, 2, 3, o).indices(0), (std::vector<std::uint64_t>{2, 5, 8, 1}));
  // Padding longer than the data set wraps more than once: 2 samples over 5 ranks.
  EXPECT_EQ(Shard(2, 4, 5, o).indices(0), (std::vector<std::uint64_t>{0}));
  EXPECT_EQ(Shard(2, 3, 5, o).indices(0), (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(Shard(10, 2, 3, opts(false, ShardTail::kDrop)).indices(0),
            (std::vector<std::uint64_t>{2, 5, 8}));
  EXPECT_EQ(Shard(10, 0, 3, opts(false, ShardTail::kExactOnce)).indices(0),
            (std::vector<std::uint64_t>{0, 3, 6, 9}));
  EXPECT_EQ(Shard(10, 2, 3, opts(false, ShardTail::kExactOnce)).indices(0),
            (std::vector<std::uint64_t>{2, 5, 8}));
}

TEST(Shard, ShuffledOrderIsAPermutationAndFixedAcrossRuns) {
  // The same (seed, epoch) always gives this order: a change of the generator is a change of
  // every user's data order, and must show up here.
  const auto order = Shard(10, 0, 1, opts(true, ShardTail::kPad, 42)).indices(0);
  std::vector<std::uint64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_NE(order, sorted) << "a shuffle of 10 that is the identity";
  EXPECT_EQ(order, Shard(10, 0, 1, opts(true, ShardTail::kPad, 42)).indices(0));
  EXPECT_EQ(order, (std::vector<std::uint64_t>{9, 8, 3, 5, 4, 0, 2, 1, 6, 7}));
}

TEST(Shard, EveryRankSeesTheSameGlobalOrder) {
  // Interleaving the ranks' lists (rank r at r::world) rebuilds one order, the world=1 order.
  const std::uint64_t n = 1000;
  const int world = 8;
  const auto o = opts(true, ShardTail::kDrop, 5);
  const auto whole = Shard(n, 0, 1, o).indices(4);
  const auto ranks = all_ranks(n, world, o, 4);
  for (int r = 0; r < world; ++r) {
    for (std::size_t i = 0; i < ranks[r].size(); ++i) {
      ASSERT_EQ(ranks[r][i], whole[r + i * world]) << "rank " << r << " position " << i;
    }
  }
}

TEST(Shard, OrdersDifferPerEpochAndSeed) {
  const auto o = opts(true, ShardTail::kPad, 1);
  std::set<std::vector<std::uint64_t>> orders;
  for (std::uint64_t e = 0; e < 20; ++e) orders.insert(Shard(100, 0, 1, o).indices(e));
  EXPECT_EQ(orders.size(), 20u) << "two epochs with the same order";
  EXPECT_NE(Shard(100, 0, 1, opts(true, ShardTail::kPad, 1)).indices(0),
            Shard(100, 0, 1, opts(true, ShardTail::kPad, 2)).indices(0));
  EXPECT_EQ(Shard(100, 0, 1, opts(false, ShardTail::kPad)).indices(0),
            Shard(100, 0, 1, opts(false, ShardTail::kPad)).indices(9))
      << "without shuffle every epoch has the same order";
}

TEST(Shard, ShuffleSpreadsEachSampleOverPositions) {
  // Sample 0's position over 2000 epochs of 10 samples: every position occurs, none more than
  // twice as often as uniform (a loose bound: a broken permutation is far off it).
  std::vector<int> hits(10, 0);
  for (std::uint64_t e = 0; e < 2000; ++e) {
    const auto order = Shard(10, 0, 1, opts(true, ShardTail::kPad, 9)).indices(e);
    ++hits[std::find(order.begin(), order.end(), 0u) - order.begin()];
  }
  for (int h : hits) {
    EXPECT_GT(h, 100);
    EXPECT_LT(h, 400);
  }
}

TEST(Shard, ResumeContinuesTheSameOrder) {
  for (auto tail : {ShardTail::kPad, ShardTail::kDrop, ShardTail::kExactOnce}) {
    const Shard s(103, 2, 4, opts(true, tail, 11));
    const auto full = s.indices(6);
    for (std::uint64_t consumed = 0; consumed <= full.size(); ++consumed) {
      const auto rest = s.indices(6, consumed);
      ASSERT_EQ(rest.size(), full.size() - consumed);
      EXPECT_TRUE(std::equal(rest.begin(), rest.end(), full.begin() + consumed));
      if (consumed < full.size()) {
        EXPECT_EQ(s.at(6, consumed), full[consumed]);
      }
    }
  }
}

TEST(Shard, LargeDataSetNeedsOnlyThisRanksShare) {
  // 2^40 samples: only the 16 this rank needs are computed.
  const Shard s(std::uint64_t{1} << 40, 3, 1 << 20, opts(true, ShardTail::kPad, 3));
  EXPECT_EQ(s.size(), 1u << 20);
  const auto first = s.indices(0, s.size() - 16);
  ASSERT_EQ(first.size(), 16u);
  for (auto i : first) EXPECT_LT(i, std::uint64_t{1} << 40);
}

TEST(Shard, SelectsFilesLikeIndices) {
  const std::vector<std::string> files = {"a", "b", "c", "d", "e"};
  const Shard s(5, 1, 2, opts(true, ShardTail::kExactOnce, 4));
  std::vector<std::string> expected;
  for (auto i : s.indices(2)) expected.push_back(files[i]);
  EXPECT_EQ(s.select(files, 2), expected);
}

TEST(Shard, RejectsBadArgumentsNamingThem) {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const dtrain::Error& e) {
      EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] { Shard(10, 4, 4); }), "dtrain: shard: rank; expected 0 to 3, got 4");
  EXPECT_EQ(message([] { Shard(10, 0, 0); }),
            "dtrain: shard: world size; expected at least 1, got 0");
  EXPECT_EQ(message([] { Shard(10, 0, 2).indices(0, 6); }),
            "dtrain: shard: consumed samples; expected at most the 5 samples rank 0 gets per "
            "epoch, got 6");
  EXPECT_EQ(message([] { Shard(10, 0, 2).at(0, 5); }),
            "dtrain: shard: position 5 of rank 0; expected less than its 5 samples per epoch");
  const std::vector<std::string> files = {"a"};
  EXPECT_EQ(message([&] { Shard(2, 0, 1).select(files, 0); }),
            "dtrain: shard: select: list size; expected the shard's 2 samples, got 1 items");
  // More indices than a vector can hold: named, not std::vector's "vector::reserve" (issue 33).
  const std::uint64_t huge = std::uint64_t{1} << 63;
  EXPECT_EQ(message([&] { Shard(huge, 0, 1, opts(false, ShardTail::kPad, 0)).indices(0, 1); }),
            "dtrain: shard: indices: " + std::to_string(huge - 1) +
                " samples from position 1; expected at most " +
                std::to_string(std::vector<std::uint64_t>().max_size()) +
                " (what one list can hold): ask for a part with consumed, or use at()");
}

// The property the Fashion-MNIST example's "same global batch, same curve" promise rests on: the
// local batches of step k on all ranks together are exactly global batch k of one rank.
TEST(Shard, RanksTogetherHoldTheGlobalBatchOfOneRank) {
  const std::uint64_t samples = 1003;  // not a multiple of anything used here
  const ShardOptions o = opts(true, ShardTail::kDrop, 2026);
  const auto whole = Shard(samples, 0, 1, o);
  for (int world : {2, 4}) {
    const std::size_t batch = 8 * static_cast<std::size_t>(world);
    const std::size_t local = batch / static_cast<std::size_t>(world);
    for (std::uint64_t epoch : {0u, 3u}) {
      const auto all = whole.indices(epoch);
      const auto ranks = all_ranks(samples, world, o, epoch);
      for (std::size_t step = 0; step < samples / batch; ++step) {
        std::vector<std::uint64_t> together;
        for (const auto& mine : ranks) {
          together.insert(together.end(), mine.begin() + static_cast<std::ptrdiff_t>(step * local),
                          mine.begin() + static_cast<std::ptrdiff_t>((step + 1) * local));
        }
        std::vector<std::uint64_t> global(
            all.begin() + static_cast<std::ptrdiff_t>(step * batch),
            all.begin() + static_cast<std::ptrdiff_t>((step + 1) * batch));
        std::sort(together.begin(), together.end());
        std::sort(global.begin(), global.end());
        ASSERT_EQ(together, global) << world << " ranks, epoch " << epoch << ", step " << step;
      }
    }
  }
}

// A Shard keeps no state between calls: an epoch's order is the same whichever epochs the same
// object was asked for before (a training loop that re-reads epoch 0 after epoch 1 on resume).
TEST(Shard, AnEpochsOrderDoesNotDependOnEarlierCalls) {
  const ShardOptions o = opts(true, ShardTail::kDrop, 2026);
  const Shard used(1000, 0, 1, o);
  const auto epoch0 = used.indices(0);
  const auto epoch1 = used.indices(1);
  EXPECT_NE(epoch0, epoch1);
  EXPECT_EQ(used.indices(0), epoch0);
  EXPECT_EQ(epoch1, Shard(1000, 0, 1, o).indices(1));
}

}  // namespace
