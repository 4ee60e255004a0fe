// The pool that reads a run's files in parallel hands their items over in source order, as one
// thread reading them in turn would, at every pool size; an error reaches the caller after every
// item before it; a consumer that throws stops the pool; and what is held at once is bounded by
// the pool, not by the number of sources.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "ordered_fanout.hpp"
#include "progress_line.hpp"

namespace dtrain::cli {
namespace {

using Fanout = OrderedFanout<long long>;

// Source i holds i * 700 + 1 items (some sources span several chunks), numbered on.
long long first_of(std::size_t i) {
  long long first = 0;
  for (std::size_t j = 0; j < i; ++j) first += static_cast<long long>(j) * 700 + 1;
  return first;
}
void produce(std::size_t i, const Fanout::Sink& sink) {
  const long long first = first_of(i);
  for (long long k = 0; k < static_cast<long long>(i) * 700 + 1; ++k) sink(first + k);
}

TEST(OrderedFanout, HandsEveryItemOverInSourceOrderAtAnyPoolSize) {
  for (std::size_t threads : {1u, 2u, 3u, 8u}) {
    std::vector<long long> seen;
    std::vector<std::size_t> sources;
    Fanout::run(20, threads, produce, [&](std::size_t i, long long& item) {
      if (sources.empty() || sources.back() != i) sources.push_back(i);
      seen.push_back(item);
    });
    ASSERT_EQ(seen.size(), static_cast<std::size_t>(first_of(20))) << threads << " threads";
    for (std::size_t k = 0; k < seen.size(); ++k) ASSERT_EQ(seen[k], static_cast<long long>(k));
    EXPECT_EQ(sources.size(), 20u);
  }
}

TEST(OrderedFanout, AnErrorReachesTheCallerAfterEveryItemBeforeIt) {
  // Source 5 fails after 1,500 items; sources 6 on (read meanwhile) are never handed over.
  for (std::size_t threads : {1u, 4u}) {
    std::vector<long long> seen;
    try {
      Fanout::run(
          12, threads,
          [](std::size_t i, const Fanout::Sink& sink) {
            for (long long k = 0; k < 2000; ++k) {
              if (i == 5 && k == 1500) throw std::runtime_error("bad line in source 5");
              sink(static_cast<long long>(i) * 2000 + k);
            }
          },
          [&](std::size_t, long long& item) { seen.push_back(item); });
      FAIL() << "no error";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "bad line in source 5");
    }
    ASSERT_EQ(seen.size(), 5u * 2000 + 1500) << threads << " threads";
    EXPECT_EQ(seen.back(), 5 * 2000 + 1499);
  }
}

TEST(OrderedFanout, AConsumerThatThrowsStopsThePool) {
  std::atomic<long long> produced{0};
  EXPECT_THROW(Fanout::run(
                   1000, 4,
                   [&](std::size_t, const Fanout::Sink& sink) {
                     for (int k = 0; k < 5000; ++k) {
                       ++produced;
                       sink(k);
                     }
                   },
                   [](std::size_t i, long long&) {
                     if (i == 3) throw std::logic_error("stop");
                   }),
               std::logic_error);
  // The pool stopped within its window of 8 sources, each at most 4 chunks ahead: far from the
  // 5,000,000 items of all sources.
  EXPECT_LT(produced.load(), 9 * 5000);
}

TEST(OrderedFanout, HoldsAtMostThePoolsChunksAtOnce) {
  // The consumer is slow; the producers run ahead only as far as their chunks allow.
  std::atomic<long long> produced{0}, consumed{0}, most_ahead{0};
  Fanout::run(
      64, 2,
      [&](std::size_t, const Fanout::Sink& sink) {
        for (int k = 0; k < 3000; ++k) {
          const long long ahead = ++produced - consumed.load();
          long long m = most_ahead.load();
          while (ahead > m && !most_ahead.compare_exchange_weak(m, ahead)) {
          }
          sink(k);
        }
      },
      [&](std::size_t, long long&) { ++consumed; });
  EXPECT_EQ(consumed.load(), 64 * 3000);
  // 4 sources in flight (2 x 2 threads), each up to 4 chunks queued and one being filled, plus
  // the chunk the consumer holds.
  EXPECT_LE(most_ahead.load(),
            static_cast<long long>((4 * (Fanout::kMaxChunks + 1) + 1) * Fanout::kChunkItems));
}

TEST(OrderedFanout, ASlotBeingFilledWhenTheProducerThrowsIsNotGiven) {
  for (std::size_t threads : {1u, 4u}) {
    std::vector<long long> seen;
    EXPECT_THROW(Fanout::run(
                     8, threads,
                     [](std::size_t i, const Fanout::Sink& sink) {
                       for (long long k = 0; k < 2000; ++k) {
                         long long& slot = sink.next();
                         slot = -1;  // half-written when the line turns out bad
                         if (i == 5 && k == 1500) throw std::runtime_error("bad line");
                         slot = static_cast<long long>(i) * 2000 + k;
                       }
                     },
                     [&](std::size_t, long long& item) { seen.push_back(item); }),
                 std::runtime_error);
    ASSERT_EQ(seen.size(), 5u * 2000 + 1500) << threads << " threads";
    EXPECT_EQ(seen.back(), 5 * 2000 + 1499);
  }
}

TEST(OrderedFanout, FillsTheSlotsOfConsumedChunksAgain) {
  // 192,000 items through the slots of at most the chunks in flight at once: 4 sources x
  // kMaxChunks queued, one being filled per thread, one being consumed (and none made anew per
  // chunk, which cost the readers page faults and a record's construction per line).
  std::mutex slots_mutex;
  std::set<const long long*> slots;
  long long recycled = 0;
  Fanout::run(
      64, 2,
      [&](std::size_t i, const Fanout::Sink& sink) {
        for (int k = 0; k < 3000; ++k) {
          long long& slot = sink.next();
          {
            std::lock_guard lock(slots_mutex);
            slots.insert(&slot);
            if (slot != 0) ++recycled;
          }
          slot = static_cast<long long>(i) * 3000 + k + 1;
        }
      },
      [&](std::size_t, long long&) {});
  EXPECT_LE(slots.size(), (4 * Fanout::kMaxChunks + 2 + 1) * Fanout::kChunkItems);
  EXPECT_GT(recycled, 64 * 3000 / 2);
}

TEST(ProgressLine, SaysHowManyOfHowMany) {
  EXPECT_EQ(progress_text("metric files", 312, 1024),
            "dtrain: reading 1024 metric files: 312 done (30 %)");
  EXPECT_EQ(progress_text("metric files", 0, 0), "dtrain: reading 0 metric files: 0 done (100 %)");
}

}  // namespace
}  // namespace dtrain::cli
