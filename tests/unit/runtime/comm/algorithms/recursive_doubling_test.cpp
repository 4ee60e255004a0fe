// RecursiveDoubling with threads as ranks and in-memory mailboxes as its transport: every size up
// to 9 (powers of two and the fold of the others), every op, and the same bits on every rank, for
// recursive doubling and for recursive halving then doubling.
#include "comm/algorithms/recursive_doubling.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "threads_as_ranks.hpp"
#include "transfer_mailboxes.hpp"

namespace {

using dtrain::DType;
using dtrain::ReduceOp;
using dtrain::runtime::RecursiveDoubling;
using dtrain::test::Mailboxes;

// Both algorithms of the class: recursive doubling and recursive halving then doubling.
using Algorithm = void (RecursiveDoubling::*)(const void*, void*, std::size_t, DType, ReduceOp);
const Algorithm kAlgorithms[] = {&RecursiveDoubling::allreduce,
                                 &RecursiveDoubling::allreduce_halving};

void every_op_on_every_size(Algorithm algorithm, std::size_t n) {
  for (int size = 1; size <= 9; ++size) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct}) {
      SCOPED_TRACE("size " + std::to_string(size) + " " + std::string(dtrain::to_string(op)) +
                   ", " + std::to_string(n) + " elements");
      Mailboxes boxes;
      std::vector<std::vector<std::int64_t>> results(static_cast<std::size_t>(size));
      dtrain::test::threads_as_ranks(size, [&](int rank) {
        RecursiveDoubling rd(rank, size, boxes.transport(rank));
        std::vector<std::int64_t> data(n);
        for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<std::int64_t>(i % 5) + rank + 1;
        (rd.*algorithm)(data.data(), data.data(), n, DType::kInt64, op);
        results[static_cast<std::size_t>(rank)] = data;
      });
      for (std::size_t i = 0; i < n; ++i) {
        std::int64_t want = op == ReduceOp::kProduct ? 1 : op == ReduceOp::kSum ? 0 : -1;
        for (int r = 0; r < size; ++r) {
          const std::int64_t v = static_cast<std::int64_t>(i % 5) + r + 1;
          if (op == ReduceOp::kSum) want += v;
          if (op == ReduceOp::kProduct) want *= v;
          if (op == ReduceOp::kMin) want = r == 0 ? v : std::min(want, v);
          if (op == ReduceOp::kMax) want = r == 0 ? v : std::max(want, v);
        }
        for (int r = 0; r < size; ++r) {
          ASSERT_EQ(results[static_cast<std::size_t>(r)][i], want) << "rank " << r << " at " << i;
        }
      }
    }
  }
}

TEST(RecursiveDoubling, EveryOpOnEverySize) { every_op_on_every_size(kAlgorithms[0], 37); }

// Halving splits the elements among the ranks: odd counts, fewer elements than ranks (empty
// halves) and none at all.
TEST(RecursiveHalving, EveryOpOnEverySizeAndSplit) {
  for (std::size_t n :
       {std::size_t{37}, std::size_t{1000}, std::size_t{3}, std::size_t{1}, std::size_t{0}}) {
    every_op_on_every_size(kAlgorithms[1], n);
  }
}

TEST(RecursiveDoubling, OutOfPlaceLeavesTheInputAndEveryRankGetsTheSameBits) {
  // Float sums round by operand order; the algorithm fixes the order, so the bits agree.
  constexpr std::size_t n = 1000;
  for (const Algorithm algorithm : kAlgorithms) {
    for (int size : {3, 4, 6, 8}) {
      Mailboxes boxes;
      std::vector<std::vector<float>> results(static_cast<std::size_t>(size));
      dtrain::test::threads_as_ranks(size, [&](int rank) {
        std::mt19937 gen(static_cast<unsigned>(rank) + 11);
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        std::vector<float> in(n);
        for (float& x : in) x = dist(gen) * 1e-3f + dist(gen);
        const std::vector<float> kept = in;
        std::vector<float> out(n);
        RecursiveDoubling rd(rank, size, boxes.transport(rank));
        (rd.*algorithm)(in.data(), out.data(), n, DType::kFloat32, ReduceOp::kSum);
        EXPECT_EQ(in, kept);
        results[static_cast<std::size_t>(rank)] = std::move(out);
      });
      for (int r = 1; r < size; ++r) {
        ASSERT_EQ(std::memcmp(results[0].data(), results[static_cast<std::size_t>(r)].data(),
                              n * sizeof(float)),
                  0)
            << size << " ranks, rank " << r;
      }
    }
  }
}

// A broadcast from each root on every size: every rank ends with the root's bytes, which cross
// size - 1 messages (each rank receives them once, as in a tree), and every other message is
// empty.
TEST(RecursiveDoubling, BroadcastFromEveryRootOnEverySize) {
  constexpr std::size_t bytes = 37;
  for (int size = 1; size <= 9; ++size) {
    for (int root = 0; root < size; ++root) {
      SCOPED_TRACE("size " + std::to_string(size) + ", root " + std::to_string(root));
      Mailboxes boxes;
      std::vector<std::vector<char>> results(static_cast<std::size_t>(size));
      dtrain::test::threads_as_ranks(size, [&](int rank) {
        std::vector<char> data(bytes);
        for (std::size_t i = 0; i < bytes; ++i)
          data[i] = static_cast<char>(rank * 40 + static_cast<int>(i));
        RecursiveDoubling rd(rank, size, boxes.transport(rank));
        rd.broadcast(data.data(), bytes, root);
        results[static_cast<std::size_t>(rank)] = std::move(data);
      });
      for (int r = 0; r < size; ++r) {
        ASSERT_EQ(results[static_cast<std::size_t>(r)], results[static_cast<std::size_t>(root)])
            << "rank " << r;
      }
      ASSERT_EQ(results[static_cast<std::size_t>(root)][1], static_cast<char>(root * 40 + 1));
      int full = 0;
      for (const auto& [from, messages] : boxes.sent()) {
        for (const auto& m : messages) {
          EXPECT_TRUE(m.bytes == 0 || m.bytes == bytes) << from << " -> " << m.to;
          full += m.bytes == bytes ? 1 : 0;
        }
      }
      EXPECT_EQ(full, size - 1);
    }
  }
}

// The TCP backend compares every rank's call on the messages of allreduce()'s edges (the
// broadcast's agreement); a broadcast that travels in them instead must send on each of those
// edges, in the same order, or ranks passing different roots, or counts on either side of
// doubling_broadcast_pays, could miss each other.
TEST(RecursiveDoubling, BroadcastSendsOnEveryEdgeOfTheAllreduceInItsOrder) {
  for (int size = 1; size <= 9; ++size) {
    Mailboxes reduced;
    dtrain::test::threads_as_ranks(size, [&](int rank) {
      std::int32_t x = rank;
      RecursiveDoubling(rank, size, reduced.transport(rank))
          .allreduce(&x, &x, 1, DType::kInt32, ReduceOp::kMin);
    });
    const auto destinations = [](Mailboxes& boxes) {
      std::map<int, std::vector<int>> to;
      for (const auto& [from, messages] : boxes.sent()) {
        for (const auto& m : messages) to[from].push_back(m.to);
      }
      return to;
    };
    for (int root = 0; root < size; ++root) {
      SCOPED_TRACE("size " + std::to_string(size) + ", root " + std::to_string(root));
      Mailboxes broadcast;
      dtrain::test::threads_as_ranks(size, [&](int rank) {
        char data[8] = {};
        RecursiveDoubling(rank, size, broadcast.transport(rank)).broadcast(data, sizeof data, root);
      });
      EXPECT_EQ(destinations(broadcast), destinations(reduced));
    }
  }
}

TEST(RecursiveDoubling, BroadcastTravelsInTheDoublingUpTo64KiB) {
  EXPECT_TRUE(dtrain::runtime::doubling_broadcast_pays(0));
  EXPECT_TRUE(dtrain::runtime::doubling_broadcast_pays(std::size_t{64} << 10));
  EXPECT_FALSE(dtrain::runtime::doubling_broadcast_pays((std::size_t{64} << 10) + 1));
}

}  // namespace
