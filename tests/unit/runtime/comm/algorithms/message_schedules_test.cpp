// gather, scatter, reduce, alltoall and alltoallv through the public Comm on the TCP backend
// (ranks as threads), on 1 to 5 ranks and every root: exact results for every dtype, in-place
// forms, uneven and empty all-to-all blocks that change from call to call, large equal blocks and
// a rank lost among them, and the refusals.
#include "comm/algorithms/message_schedules.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "bootstrap/store.hpp"
#include "comm/algorithms/half.hpp"
#include "comm/engine.hpp"
#include "comm/single_communicator.hpp"
#include "error_text.hpp"
#include "tcp_test_ranks.hpp"
#include "threads_as_ranks.hpp"

namespace {

using dtrain::Comm;
using dtrain::DType;
using dtrain::Error;
using dtrain::ReduceOp;
using dtrain::test::tcp_comm_ranks;

using dtrain::test::error_of;

TEST(MessageSchedules, GatherAndScatterMoveEachBlockToItsRankOnly) {
  for (int size : {2, 3, 5}) {
    for (int root = 0; root < size; ++root) {
      SCOPED_TRACE(std::to_string(size) + " ranks, root " + std::to_string(root));
      tcp_comm_ranks(size, [&](Comm& c, int rank) {
        const std::vector<std::int64_t> mine = {rank * 10, rank * 10 + 1, rank * 10 + 2};
        std::vector<std::int64_t> all(rank == root ? 3 * static_cast<std::size_t>(size) : 0);
        c.gather(mine.data(), rank == root ? all.data() : nullptr, 3, DType::kInt64, root);
        if (rank == root) {
          for (int r = 0; r < size; ++r) {
            EXPECT_EQ(all[3 * r], r * 10);
            EXPECT_EQ(all[3 * r + 2], r * 10 + 2);
          }
        }
        // scatter back, then in place at the root (its block of the input is its output)
        std::vector<std::int64_t> block(3, -1);
        c.scatter(all.data(), block.data(), 3, DType::kInt64, root);
        EXPECT_EQ(block, mine);
        if (rank == root) {
          c.scatter(all.data(), all.data() + 3 * root, 3, DType::kInt64, root);
        } else {
          c.scatter(nullptr, block.data(), 3, DType::kInt64, root);
          EXPECT_EQ(block, mine);
        }
        // gather in place at the root
        if (rank == root) {
          std::fill(all.begin(), all.end(), -1);
          std::copy(mine.begin(), mine.end(), all.begin() + 3 * root);
          c.gather(all.data() + 3 * root, all.data(), 3, DType::kInt64, root);
          EXPECT_EQ(all[3 * ((root + 1) % size) + 1], ((root + 1) % size) * 10 + 1);
        } else {
          c.gather(mine.data(), nullptr, 3, DType::kInt64, root);
        }
      });
    }
  }
}

// Integer-valued inputs, exact in every type; the root's result only, the others' out untouched.
TEST(MessageSchedules, ReduceCombinesEveryRankAtTheRootForEveryTypeAndOp) {
  for (int size : {1, 2, 3, 5}) {
    tcp_comm_ranks(size, [&](Comm& c, int rank) {
      for (int root = 0; root < size; ++root) {
        std::vector<float> in(100, static_cast<float>(rank + 1));
        std::vector<float> out(100, -7.0f);
        c.reduce(in.data(), out.data(), 100, DType::kFloat32, ReduceOp::kSum, root);
        const float sum = static_cast<float>(size * (size + 1) / 2);
        EXPECT_EQ(out[99], rank == root ? sum : -7.0f) << "root " << root;
        std::vector<double> avg(10, static_cast<double>(rank));
        c.reduce(avg.data(), avg.data(), 10, DType::kFloat64, ReduceOp::kAvg, root);
        if (rank == root) {
          EXPECT_EQ(avg[0], (size - 1) / 2.0);
        }
        std::vector<std::int32_t> mx = {rank, -rank};
        std::vector<std::int32_t> got(2);
        c.reduce(mx.data(), got.data(), 2, DType::kInt32, ReduceOp::kMax, root);
        if (rank == root) {
          EXPECT_EQ(got, (std::vector<std::int32_t>{size - 1, 0}));
        }
        std::vector<std::uint16_t> bf = {dtrain::runtime::float_to_bfloat16(2.0f)};
        std::vector<std::uint16_t> prod(1);
        c.reduce(bf.data(), prod.data(), 1, DType::kBFloat16, ReduceOp::kProduct, root);
        if (rank == root) {
          EXPECT_EQ(dtrain::runtime::bfloat16_to_float(prod[0]), static_cast<float>(1 << size));
        }
      }
    });
  }
}

TEST(MessageSchedules, AlltoallSendsBlockRToRankR) {
  for (int size : {2, 4}) {
    tcp_comm_ranks(size, [&](Comm& c, int rank) {
      std::vector<std::uint8_t> in(static_cast<std::size_t>(size) * 2);
      for (int d = 0; d < size; ++d) {
        in[2 * d] = static_cast<std::uint8_t>(rank * 16 + d);
        in[2 * d + 1] = 0xAB;
      }
      std::vector<std::uint8_t> out(in.size());
      c.alltoall(in.data(), out.data(), 2, DType::kUInt8);
      for (int s = 0; s < size; ++s) {
        EXPECT_EQ(out[2 * s], s * 16 + rank);
        EXPECT_EQ(out[2 * s + 1], 0xAB);
      }
    });
  }
}

// Blocks larger than the kernel's buffers, with every block one size: the sends go out two at a
// time (kEqualBlocksInFlight), and a rank that leaves (its communicator destroyed, as a killed
// process's sockets close) after a first call is named by every survivor's next one, whose window
// waits on a send to it.
TEST(MessageSchedules, AnAlltoallOfLargeBlocksIsExactAndALostRankIsNamedByEverySurvivor) {
  constexpr int kSize = 4;
  constexpr std::size_t kBlock = std::size_t{1} << 20;  // int32 elements: 4 MiB a block
  std::vector<std::string> errors(kSize);
  auto store = dtrain::runtime::make_memory_store();
  dtrain::test::threads_as_ranks(kSize, [&](int rank) {
    dtrain::runtime::Settings s = dtrain::test::settings(false);
    s.timeout = std::chrono::seconds(20);
    dtrain::runtime::PrefixStore tcp(store, "tcp");
    auto engine = std::make_unique<dtrain::runtime::Engine>(
        dtrain::runtime::make_tcp_communicator(tcp, rank, kSize, s), rank, kSize, s);
    Comm c(*engine);
    std::vector<std::int32_t> in(kBlock * kSize), out(kBlock * kSize, -1);
    for (int d = 0; d < kSize; ++d) {
      for (std::size_t i = 0; i < kBlock; i += 4096) in[d * kBlock + i] = rank * 100 + d;
    }
    c.alltoall(in.data(), out.data(), kBlock, DType::kInt32);
    for (int from = 0; from < kSize; ++from) {
      EXPECT_EQ(out[from * kBlock], from * 100 + rank) << "block from rank " << from;
      EXPECT_EQ(out[from * kBlock + kBlock - 4096], from * 100 + rank) << "block from " << from;
    }
    c.barrier();
    if (rank == kSize - 1) {
      engine.reset();
      return;
    }
    errors[rank] = error_of([&] { c.alltoall(in.data(), out.data(), kBlock, DType::kInt32); });
  });
  for (int r = 0; r < kSize - 1; ++r) {
    EXPECT_NE(errors[r].find("rank 3 (on "), std::string::npos)
        << "rank " << r << ": " << errors[r];
  }
}

// An MoE step's routing: rank r sends (r + d + step) % 3 elements to rank d, zeros included,
// different on every step, at offsets with gaps; every rank computes the same table.
TEST(MessageSchedules, AlltoallvTakesUnevenAndEmptyBlocksThatChangeEveryCall) {
  constexpr int kSize = 4;
  const auto sends = [](int from, int to, int step) {
    return static_cast<std::size_t>((from + to + step) % 3);
  };
  tcp_comm_ranks(kSize, [&](Comm& c, int rank) {
    for (int step = 0; step < 3; ++step) {
      std::vector<std::size_t> sc(kSize), so(kSize), rc(kSize), ro(kSize);
      std::size_t s_end = 0, r_end = 0;
      for (int p = 0; p < kSize; ++p) {
        sc[p] = sends(rank, p, step);
        so[p] = s_end + 1;  // a gap before each block
        s_end = so[p] + sc[p];
        rc[p] = sends(p, rank, step);
        ro[p] = r_end;
        r_end += rc[p];
      }
      std::vector<float> in(s_end, -1.0f);
      for (int p = 0; p < kSize; ++p) {
        for (std::size_t i = 0; i < sc[p]; ++i)
          in[so[p] + i] = static_cast<float>(rank * 100 + p * 10 + i);
      }
      std::vector<float> out(r_end, -2.0f);
      c.alltoallv(in.data(), sc, so, out.data(), rc, ro, DType::kFloat32);
      for (int p = 0; p < kSize; ++p) {
        for (std::size_t i = 0; i < rc[p]; ++i) {
          EXPECT_EQ(out[ro[p] + i], static_cast<float>(p * 100 + rank * 10 + i))
              << "step " << step << " from " << p;
        }
      }
    }
  });
}

TEST(MessageSchedules, AlltoallvCountsThatDisagreeAreNamed) {
  tcp_comm_ranks(
      2,
      [&](Comm& c, int rank) {
        const std::vector<std::size_t> offsets = {0, 4};
        // rank 0 sends 3 elements to rank 1, which expects 2.
        const std::vector<std::size_t> sc =
            rank == 0 ? std::vector<std::size_t>{1, 3} : std::vector<std::size_t>{2, 1};
        const std::vector<std::size_t> rc =
            rank == 0 ? std::vector<std::size_t>{1, 2} : std::vector<std::size_t>{2, 1};
        std::vector<std::int32_t> in(8), out(8);
        const std::string e = error_of(
            [&] { c.alltoallv(in.data(), sc, offsets, out.data(), rc, offsets, DType::kInt32); });
        if (rank == 1) {
          EXPECT_NE(e.find("alltoallv #0"), std::string::npos) << e;
          EXPECT_NE(e.find("rank 0 (on "), std::string::npos) << e;
          EXPECT_NE(e.find("sent 12 bytes; expected a message of the receive's size"),
                    std::string::npos)
              << e;
        }
      },
      std::chrono::seconds(5));
}

// Ranks that pass the same bytes as different calls (an element type, an operation): each
// message carries its call's header (call_check.hpp), and the receive that meets another call
// names both ranks' calls, where sizes alone matched.
TEST(MessageSchedules, CallsOfTheSameSizeThatDifferAreNamedWithBothCalls) {
  const std::string h = dtrain::test::host_name();
  std::vector<std::string> gather(2), reduce(2), alltoall(2);
  tcp_comm_ranks(
      2,
      [&](Comm& c, int rank) {
        const auto r = static_cast<std::size_t>(rank);
        const DType type = rank == 0 ? DType::kFloat32 : DType::kInt32;
        std::vector<std::int32_t> in(4), out(8);
        gather[r] = error_of([&] { c.gather(in.data(), out.data(), 2, type, 0); });
        c.barrier();
        const ReduceOp op = rank == 0 ? ReduceOp::kSum : ReduceOp::kMax;
        reduce[r] = error_of([&] { c.reduce(in.data(), out.data(), 2, DType::kInt32, op, 0); });
        c.barrier();
        alltoall[r] = error_of([&] { c.alltoall(in.data(), out.data(), 2, type); });
      },
      std::chrono::seconds(5));
  const std::string ranks =
      "ranks passed different calls to one collective: rank 0 (on " + h + ") passed ";
  EXPECT_EQ(gather[0], "dtrain: gather #0 (8 bytes, rank 0 of 2): recv from rank 1 (on " + h +
                           ") (tag -1, 8 bytes; rank 0 of 2): " + ranks +
                           "2 float32 elements to gather at root 0, rank 1 (on " + h +
                           ") passed 2 int32 elements to gather at root 0; every rank must pass "
                           "the same number of elements, element type and root");
  EXPECT_EQ(gather[1], "(no error)");  // its one send went
  EXPECT_EQ(reduce[0], "dtrain: reduce #2 (8 bytes, rank 0 of 2): recv from rank 1 (on " + h +
                           ") (tag -3, 8 bytes; rank 0 of 2): " + ranks +
                           "2 int32 elements to reduce (sum) at root 0, rank 1 (on " + h +
                           ") passed 2 int32 elements to reduce (max) at root 0; every rank must "
                           "pass the same number of elements, element type, operation and root");
  for (int r : {0, 1}) {
    EXPECT_NE(alltoall[static_cast<std::size_t>(r)].find(
                  ranks + "float32 blocks to alltoallv, rank 1 (on " + h +
                  ") passed int32 blocks to alltoallv; every rank must pass the same element type"),
              std::string::npos)
        << alltoall[static_cast<std::size_t>(r)];
  }
}

TEST(MessageSchedules, BadArgumentsAreRefusedBeforeAnythingIsSent) {
  tcp_comm_ranks(2, [&](Comm& c, int rank) {
    std::vector<float> v(4);
    EXPECT_EQ(error_of([&] { c.gather(v.data(), v.data(), 1, DType::kFloat32, 2); }),
              "dtrain: gather: root rank out of range; expected 0 to 1, got 2");
    EXPECT_EQ(error_of([&] { c.reduce(v.data(), v.data(), 1, DType::kInt32, ReduceOp::kAvg, 0); }),
              "dtrain: reduce: avg is defined for floating types; expected float32, float64, "
              "float16 or bfloat16 (or sum), got int32");
    const std::vector<std::size_t> one = {1};
    EXPECT_EQ(
        error_of([&] { c.alltoallv(v.data(), one, one, v.data(), one, one, DType::kFloat32); }),
        "dtrain: alltoallv: send counts and offsets; expected 2 of each (one per rank), got "
        "1 and 1");
    const std::vector<std::size_t> counts = {1, 1}, offsets = {0, 1};
    EXPECT_EQ(error_of([&] {
                c.alltoallv(v.data(), counts, offsets, v.data() + 1, counts, offsets,
                            DType::kFloat32);
              }),
              "dtrain: alltoallv: input and output overlap; expected disjoint buffers");
    if (rank == 0) {
      EXPECT_EQ(error_of([&] { c.gather(v.data(), nullptr, 1, DType::kFloat32, 0); }),
                "dtrain: gather: output buffer; expected a pointer to 2 elements, got null");
    }
    c.barrier();
  });
}

}  // namespace
