// The TCP communicator on several nodes and with many ranks (threads as ranks named on nodes,
// over the in-memory store): the hierarchy across nodes, a lost or silent rank in it, and, for
// issue 29, the connections each rank holds and a lost rank named by every survivor. Different
// calls on different ranks: tcp_communicator_mismatch_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/store.hpp"
#include "comm/transport/tcp/tcp_communicator.hpp"
#include "tcp_test_ranks.hpp"
#include "threads_as_ranks.hpp"

namespace {

using dtrain::DType;
using dtrain::ReduceOp;
using dtrain::runtime::Communicator;
using dtrain::test::host_name;
using dtrain::test::on_node;
using dtrain::test::settings;
TEST(TcpCommunicator, RanksOnSeveralNodesTakeTheHierarchyExactly) {
  using dtrain::runtime::AllreduceAlgo;
  struct Case {
    int nodes, per_node;
    AllreduceAlgo algo;
    const char* transport;
  };
  for (const Case c : {Case{2, 2, AllreduceAlgo::kAuto, "hierarchical"},
                       Case{3, 2, AllreduceAlgo::kAuto, "hierarchical"},
                       Case{2, 3, AllreduceAlgo::kHierarchical, "hierarchical"},
                       Case{4, 1, AllreduceAlgo::kHierarchical, "hierarchical"},
                       Case{4, 1, AllreduceAlgo::kAuto, "tcp"},  // one rank per node: its own ring
                       Case{3, 1, AllreduceAlgo::kAuto, "tcp"},  // small: doubling folds a rank in
                       Case{5, 2, AllreduceAlgo::kAuto, "hierarchical"},
                       Case{2, 2, AllreduceAlgo::kFlat, "tcp"}}) {
    const int size = c.nodes * c.per_node;
    SCOPED_TRACE(std::to_string(c.nodes) + " x " + std::to_string(c.per_node) + ", " + c.transport);
    auto store = dtrain::runtime::make_memory_store();
    dtrain::test::threads_as_ranks(size, [&](int rank) {
      const auto comm = on_node(store, rank, size, c.per_node, c.algo);
      EXPECT_EQ(comm->allreduce_transport(), c.transport);
      // 3 MiB and a bit: pieces of 1 MiB, the last one short and split unevenly into shares.
      const std::size_t n = (std::size_t{3} << 18) + 1001;
      std::vector<float> data(n);
      for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<float>(i % 1000 + rank);
      comm->allreduce(data.data(), data.data(), n, DType::kFloat32, ReduceOp::kSum);
      const float ranks_sum = static_cast<float>(size * (size - 1) / 2);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(data[i], static_cast<float>(size) * static_cast<float>(i % 1000) + ranks_sum)
            << i;
      }
      // Out of place, another type and op; and small messages (across nodes without the
      // hierarchy: recursive doubling).
      for (const std::size_t count : {std::size_t{300000}, std::size_t{7}}) {
        std::vector<std::int32_t> in(count), out(count);
        for (std::size_t i = 0; i < count; ++i) in[i] = static_cast<std::int32_t>(i) * (rank + 1);
        comm->allreduce(in.data(), out.data(), count, DType::kInt32, ReduceOp::kMax);
        for (std::size_t i = 0; i < count; ++i) {
          ASSERT_EQ(out[i], static_cast<std::int32_t>(i) * size) << count << " at " << i;
        }
      }
      std::vector<double> avg(100000, static_cast<double>(rank));
      comm->allreduce(avg.data(), avg.data(), avg.size(), DType::kFloat64, ReduceOp::kAvg);
      EXPECT_EQ(avg.front(), (size - 1) / 2.0);
      EXPECT_EQ(avg.back(), (size - 1) / 2.0);
      // reduce_scatter (its average divided once) and allgather through the same path.
      const std::size_t block = 100003;
      std::vector<float> blocks(block * static_cast<std::size_t>(size));
      for (std::size_t i = 0; i < blocks.size(); ++i) {
        blocks[i] = static_cast<float>(i % 1000) * static_cast<float>(rank + 1);
      }
      std::vector<float> mine(block);
      comm->reduce_scatter(blocks.data(), mine.data(), block, DType::kFloat32, ReduceOp::kAvg);
      const std::size_t first = block * static_cast<std::size_t>(rank);
      for (std::size_t i = 0; i < block; ++i) {
        ASSERT_EQ(mine[i],
                  static_cast<float>((first + i) % 1000) * static_cast<float>(size + 1) / 2)
            << "reduce_scatter at " << i;
      }
      std::vector<float> all(blocks.size());
      comm->allgather(mine.data(), all.data(), block, DType::kFloat32);
      for (std::size_t i = 0; i < all.size(); ++i) {
        ASSERT_EQ(all[i], static_cast<float>(i % 1000) * static_cast<float>(size + 1) / 2)
            << "allgather at " << i;
      }
      comm->barrier();
    });
  }
}

TEST(TcpCommunicator, UnevenNodesTakeTheHierarchyForAllreducesExactly) {
  // 3 + 3 + 1 ranks: local rank 0 of each node carries the shares around the ring; the
  // reduce_scatter and allgather go flat.
  using dtrain::runtime::AllreduceAlgo;
  for (const AllreduceAlgo algo : {AllreduceAlgo::kAuto, AllreduceAlgo::kHierarchical}) {
    auto store = dtrain::runtime::make_memory_store();
    constexpr int kSize = 7;
    dtrain::test::threads_as_ranks(kSize, [&](int rank) {
      const auto comm = on_node(store, rank, kSize, 3, algo);
      EXPECT_EQ(comm->allreduce_transport(), "hierarchical");
      const std::size_t n = (std::size_t{1} << 20) + 3;
      std::vector<float> data(n);
      for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<float>(i % 1000 + rank);
      comm->allreduce(data.data(), data.data(), n, DType::kFloat32, ReduceOp::kSum);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(data[i], 7.0f * static_cast<float>(i % 1000) + 21.0f) << i;
      }
      std::vector<std::int32_t> blocks(5 * kSize, rank + 1), mine(5);
      comm->reduce_scatter(blocks.data(), mine.data(), 5, DType::kInt32, ReduceOp::kSum);
      EXPECT_EQ(mine, std::vector<std::int32_t>(5, 28));
      comm->barrier();
    });
  }
}

// 2 nodes x 2 ranks; rank 3 goes away (its connections close, as a killed process's do) while
// the others are in a hierarchical collective: each names it, whichever wait saw it first, in
// the call it was in.
TEST(TcpCommunicator, ARankLostInTheHierarchyIsNamed) {
  for (const std::string call : {"allreduce", "reduce_scatter", "allgather"}) {
    SCOPED_TRACE(call);
    auto store = dtrain::runtime::make_memory_store();
    std::vector<std::string> errors(4);
    dtrain::test::threads_as_ranks(4, [&](int rank) {
      auto comm = on_node(store, rank, 4, 2, dtrain::runtime::AllreduceAlgo::kHierarchical);
      if (rank == 3) {
        comm->abandon();  // a killed process says goodbye to nobody
        comm.reset();
        return;
      }
      std::vector<float> x(4 << 20, 1.0f);
      try {
        if (call == "allreduce") {
          comm->allreduce(x.data(), x.data(), x.size(), DType::kFloat32, ReduceOp::kSum);
        } else if (call == "reduce_scatter") {
          comm->reduce_scatter(x.data(), x.data(), x.size() / 4, DType::kFloat32, ReduceOp::kSum);
        } else {
          comm->allgather(x.data(), x.data(), x.size() / 4, DType::kFloat32);
        }
      } catch (const dtrain::Error& e) {
        EXPECT_EQ(e.code(), dtrain::Error::Code::kComm);
        errors[static_cast<std::size_t>(rank)] = e.what();
      }
    });
    for (int r = 0; r < 3; ++r) {
      SCOPED_TRACE("rank " + std::to_string(r));
      const std::string& e = errors[static_cast<std::size_t>(r)];
      EXPECT_EQ(e.rfind("dtrain: " + call + ": ", 0), 0u) << e;
      EXPECT_NE(e.find("rank 3 (on node1) closed its connection (it exited or was killed)"),
                std::string::npos)
          << e;
    }
  }
}

// 2 nodes x 2 ranks; rank 3 never joins the allreduce: its node's other rank names it at the
// deadline, as a rank of this node, and no rank waits past the deadline for long.
TEST(TcpCommunicator, ASilentRankInTheHierarchicalAllreduceIsNamedAtTheDeadline) {
  auto store = dtrain::runtime::make_memory_store();
  std::atomic<int> done{0};
  std::vector<std::string> errors(4);
  std::vector<dtrain::Error::Code> codes(4, dtrain::Error::Code::kInternal);
  dtrain::test::threads_as_ranks(4, [&](int rank) {
    auto comm = on_node(store, rank, 4, 2, dtrain::runtime::AllreduceAlgo::kHierarchical,
                        std::chrono::milliseconds(400));
    if (rank == 3) {
      while (done.load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return;
    }
    std::vector<float> x(1 << 20, 1.0f);
    try {
      comm->allreduce(x.data(), x.data(), x.size(), DType::kFloat32, ReduceOp::kSum);
    } catch (const dtrain::Error& e) {
      codes[static_cast<std::size_t>(rank)] = e.code();
      errors[static_cast<std::size_t>(rank)] = e.what();
    }
    ++done;
  });
  EXPECT_EQ(codes[2], dtrain::Error::Code::kTimeout);
  EXPECT_EQ(errors[2],
            "dtrain: allreduce: tcp: missing ranks: 3; rank 3 (on node1) did not answer within "
            "0.4 s (DTRAIN_TIMEOUT)");
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(errors[static_cast<std::size_t>(r)].find("rank 3 (on node1) did not answer"),
              std::string::npos)
        << errors[static_cast<std::size_t>(r)];
  }
}

// Issue 29: connections grow with what the algorithms need, not with the ranks. 64 ranks (threads
// of this process, so both ends of every connection are counted here) run every collective: ring,
// recursive doubling and halving allreduces, reduce_scatter, allgather, a broadcast from a root
// that is not 0 and the barrier, on one node (shared memory off) and on 16 nodes of 4. A full mesh
// held 2 connections per pair: 64 * 63 * 2 = 8,064 descriptors; the peers each rank needs (ring
// neighbours, doubling and tree partners) are about 2 + 2 log2(64) = 14, so 64 * 14 * 2 = 1,792.
std::size_t open_descriptors() {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)e;
    ++n;
  }
  return n;
}

TEST(TcpCommunicator, SixtyFourRanksHoldConnectionsToTheirAlgorithmsPeersOnly) {
  constexpr int kSize = 64;
  for (int per_node : {kSize, 4}) {
    SCOPED_TRACE(std::to_string(per_node) + " ranks per node");
    auto store = dtrain::runtime::make_memory_store();
    const std::size_t before = open_descriptors();
    std::atomic<std::size_t> during{0};
    std::atomic<int> finished{0};
    dtrain::test::threads_as_ranks(kSize, [&](int rank) {
      dtrain::runtime::PrefixStore tcp(store, "tcp");
      dtrain::runtime::Settings s = settings(false);
      const auto comm = dtrain::runtime::make_tcp_communicator(
          tcp, rank, kSize, s, "node" + std::to_string(rank / per_node));
      // Doubling; across nodes recursive halving (80 KB), on one node the ring; across nodes the
      // hierarchy's ring among node peers, on one node the ring.
      for (std::size_t n : {std::size_t{3}, std::size_t{20'011}, std::size_t{100'003}}) {
        std::vector<std::int32_t> x(n, rank);
        comm->allreduce(x.data(), x.data(), n, DType::kInt32, ReduceOp::kSum);
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(x[i], kSize * (kSize - 1) / 2) << n << " at " << i;
      }
      std::vector<std::int32_t> in(kSize * 2, rank);
      std::vector<std::int32_t> block(2);
      comm->reduce_scatter(in.data(), block.data(), 2, DType::kInt32, ReduceOp::kSum);
      EXPECT_EQ(block[1], kSize * (kSize - 1) / 2);
      // A small allgather: log2(p) steps with the doubling's partners (64 is a power of two).
      std::vector<std::int32_t> all(kSize);
      comm->allgather(&rank, all.data(), 1, DType::kInt32);
      for (int r = 0; r < kSize; ++r) ASSERT_EQ(all[static_cast<std::size_t>(r)], r);
      std::int64_t v = rank == 37 ? 4242 : -1;
      comm->broadcast(&v, 1, DType::kInt64, 37);
      EXPECT_EQ(v, 4242);
      comm->barrier();
      // Every rank has made all its connections: count them before any rank closes its own.
      if (++finished == kSize) during = open_descriptors();
      while (finished.load() < kSize) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      comm->barrier();
    });
    const std::size_t held = during.load() - before;
    std::printf("HELD %zu\n", held);
    EXPECT_LE(held, std::size_t{kSize} * 2 * 16)
        << held << " descriptors for " << kSize << " ranks";
    EXPECT_GE(held, std::size_t{kSize} * 2 * 2);  // the ring at least: the count sees them
  }
}

// A rank lost among 16 on the sockets (ring allreduces) and on shared memory: every survivor
// names it, those not connected to it through the abort frames that the ranks which saw it go
// pass on.
TEST(TcpCommunicator, EveryOneOfSixteenRanksNamesTheLostOneThroughItsPeers) {
  constexpr int kSize = 16;
  constexpr int kLost = 7;
  for (bool shm : {false, true}) {
    SCOPED_TRACE(shm ? "shared memory" : "ring");
    auto store = dtrain::runtime::make_memory_store();
    std::vector<std::string> errors(kSize);
    dtrain::test::threads_as_ranks(kSize, [&](int rank) {
      dtrain::runtime::PrefixStore tcp(store, "tcp");
      dtrain::runtime::Settings s = settings(shm);
      s.timeout = std::chrono::seconds(20);
      auto comm = dtrain::runtime::make_tcp_communicator(tcp, rank, kSize, s);
      ASSERT_EQ(comm->allreduce_transport(), shm ? "shared memory" : "tcp");
      std::vector<float> x(1 << 16, 1.0f);
      comm->allreduce(x.data(), x.data(), x.size(), DType::kFloat32, ReduceOp::kSum);
      if (rank == kLost) {
        comm->abandon();  // a killed process says goodbye to nobody
        comm.reset();     // closes its connections, as a killed process's kernel does
        return;
      }
      try {
        for (int i = 0; i < 3; ++i) {
          comm->allreduce(x.data(), x.data(), x.size(), DType::kFloat32, ReduceOp::kSum);
        }
      } catch (const dtrain::Error& e) {
        errors[static_cast<std::size_t>(rank)] = e.what();
      }
    });
    const std::string lost = "rank 7 (on " + host_name() + ") closed its connection";
    for (int r = 0; r < kSize; ++r) {
      if (r == kLost) continue;
      EXPECT_NE(errors[static_cast<std::size_t>(r)].find(lost), std::string::npos)
          << "rank " << r << ": " << errors[static_cast<std::size_t>(r)];
    }
  }
}

}  // namespace
