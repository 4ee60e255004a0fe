// The log-step allgather (comm/algorithms/log_step_allgather.hpp) with threads as ranks and
// in-memory mailboxes as its transport: every rank ends with every block in rank order on every
// size up to 17 (powers of two: recursive doubling; the others: Bruck's), in place and not, empty
// blocks too; and each rank sends ceil(log2(p)) messages, to rank xor 2^k on a power of two (the
// doubling allreduce's partners) and to rank - 2^k otherwise, each of the blocks it holds.
#include "comm/algorithms/log_step_allgather.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "threads_as_ranks.hpp"
#include "transfer_mailboxes.hpp"

namespace {

using dtrain::runtime::log_step_allgather;
using dtrain::test::Mailboxes;

// Rank r's block: `bytes` bytes that differ by rank and position.
std::vector<char> block_of(int rank, std::size_t bytes) {
  std::vector<char> b(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    b[i] = static_cast<char>(static_cast<std::size_t>(rank) * 31 + i * 7 + 1);
  }
  return b;
}

void every_rank_gets_every_block(bool in_place) {
  for (int size = 1; size <= 17; ++size) {
    for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{24}, std::size_t{1000}}) {
      SCOPED_TRACE("size " + std::to_string(size) + ", " + std::to_string(bytes) + " B a block" +
                   (in_place ? ", in place" : ""));
      Mailboxes boxes;
      std::vector<std::vector<char>> out(static_cast<std::size_t>(size));
      dtrain::test::threads_as_ranks(size, [&](int rank) {
        auto& o = out[static_cast<std::size_t>(rank)];
        o.assign(bytes * static_cast<std::size_t>(size), '\x55');
        const std::vector<char> mine = block_of(rank, bytes);
        char* own = o.data() + static_cast<std::size_t>(rank) * bytes;
        if (in_place) std::copy(mine.begin(), mine.end(), own);
        log_step_allgather(rank, size, boxes.transport(rank), in_place ? own : mine.data(),
                           o.data(), bytes);
      });
      std::vector<char> want;
      for (int r = 0; r < size; ++r) {
        const std::vector<char> b = block_of(r, bytes);
        want.insert(want.end(), b.begin(), b.end());
      }
      for (int r = 0; r < size; ++r) {
        ASSERT_EQ(out[static_cast<std::size_t>(r)], want) << "rank " << r;
      }
    }
  }
}

TEST(LogStepAllgather, EveryRankGetsEveryBlockInRankOrderOnEverySize) {
  every_rank_gets_every_block(false);
}

TEST(LogStepAllgather, InPlaceFromTheRanksOwnBlockOfTheOutput) {
  every_rank_gets_every_block(true);
}

TEST(LogStepAllgather, EachRankSendsLog2MessagesToItsPartnerOfEachStep) {
  constexpr std::size_t kBlock = 8;
  for (int size : {2, 3, 5, 8, 13, 16, 17}) {
    SCOPED_TRACE("size " + std::to_string(size));
    Mailboxes boxes;
    dtrain::test::threads_as_ranks(size, [&](int rank) {
      std::vector<char> out(kBlock * static_cast<std::size_t>(size));
      const std::vector<char> mine = block_of(rank, kBlock);
      log_step_allgather(rank, size, boxes.transport(rank), mine.data(), out.data(), kBlock);
    });
    const bool power_of_two = (size & (size - 1)) == 0;
    const auto sent = boxes.sent();
    for (int r = 0; r < size; ++r) {
      std::vector<Mailboxes::Sent> want;
      std::size_t blocks = 0;
      for (int have = 1; have < size; have *= 2) {
        const int n = std::min(have, size - have);
        const int to = power_of_two ? r ^ have : (r - have + size) % size;
        want.push_back({to, static_cast<std::size_t>(n) * kBlock});
        blocks += static_cast<std::size_t>(n);
      }
      EXPECT_EQ(blocks, static_cast<std::size_t>(size - 1));  // every other rank's block once
      const auto it = sent.find(r);
      ASSERT_NE(it, sent.end()) << "rank " << r << " sent nothing";
      EXPECT_EQ(it->second, want) << "rank " << r;
    }
  }
}

// Flat log steps against the hierarchy's ring among nodes: each step saved is worth 4 KiB of a
// node's link, shared among the local_size - 1 extra copies the flat steps carry over it.
TEST(LogStepAllgather, PaysAgainstTheHierarchyWhileTheStepsItSavesOutweighItsBytes) {
  using dtrain::runtime::kLogStepAllgatherUpTo;
  using dtrain::runtime::log_step_allgather_up_to;
  EXPECT_EQ(log_step_allgather_up_to(8, 4), std::size_t{4096} * 2 / 3);      // 7 - 5 steps saved
  EXPECT_EQ(log_step_allgather_up_to(64, 4), std::size_t{4096} * 55 / 3);    // 63 - 8
  EXPECT_EQ(log_step_allgather_up_to(256, 4), kLogStepAllgatherUpTo);        // 245 saved: the cap
  EXPECT_EQ(log_step_allgather_up_to(16, 2), std::size_t{4096} * (15 - 5));  // one extra copy
  EXPECT_EQ(log_step_allgather_up_to(5, 4), std::size_t{0});                 // 4 - 5: none saved
  EXPECT_EQ(log_step_allgather_up_to(6, 8), std::size_t{0});                 // 5 - 6
}

}  // namespace
