// The hierarchical reduce_scatter and allgather with threads as ranks (hierarchy_ranks.hpp):
// every rank's block exact for every op and several dtypes, on 2 x 2 and 2 x 3 (one-way pairs),
// 3 x 2 round robin and 4 x 1 (the direct exchange) and one node, one piece and more pieces than
// the pipeline holds, in and out of place; the three collectives in turn on one hierarchy; a
// rank that never arrives named with the call it is missing from.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/algorithms/hierarchy.hpp"
#include "hierarchy_ranks.hpp"

namespace {

using dtrain::DType;
using dtrain::ReduceOp;
using dtrain::runtime::Hierarchy;
using dtrain::test::expected;
using dtrain::test::k2x2;
using dtrain::test::k2x3;
using dtrain::test::k3x2;
using dtrain::test::k4x1;
using dtrain::test::k5x2;
using dtrain::test::k8x1;
using dtrain::test::run_ranks;
using dtrain::test::value;

const std::vector<std::string> kOneNode = {"n1", "n1", "n1"};

// Blocks of this many elements take more pieces than the pipeline holds on `p` ranks, the last
// one not whole.
std::size_t many_pieces(std::size_t p, std::size_t elem) {
  return (Hierarchy::kDepth + 3) * Hierarchy::kPieceBytes / elem / p + 17;
}

template <typename T>
void check_reduce_scatter(const std::vector<std::string>& hosts, DType type, std::size_t count,
                          bool in_place) {
  const int p = static_cast<int>(hosts.size());
  const std::size_t total = count * static_cast<std::size_t>(p);
  std::vector<std::vector<T>> results(static_cast<std::size_t>(p));
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct}) {
    run_ranks(hosts, nullptr, [&](int r, Hierarchy& hier) {
      std::vector<T> in(total);
      for (std::size_t i = 0; i < total; ++i) in[i] = value<T>(r, i);
      std::vector<T>& out = results[static_cast<std::size_t>(r)];
      if (in_place) {
        hier.reduce_scatter(in.data(), in.data(), count, type, op);
        out.assign(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(count));
      } else {
        out.assign(count, T{});
        hier.reduce_scatter(in.data(), out.data(), count, type, op);
      }
    });
    for (int r = 0; r < p; ++r) {
      const std::size_t block = static_cast<std::size_t>(r) * count;
      for (std::size_t i = 0; i < count; ++i) {
        ASSERT_EQ(results[static_cast<std::size_t>(r)][i], expected<T>(p, block + i, op))
            << "op " << static_cast<int>(op) << " rank " << r << " element " << i << " of "
            << count;
      }
    }
  }
}

void check_allgather(const std::vector<std::string>& hosts, std::size_t bytes, bool in_place) {
  const int p = static_cast<int>(hosts.size());
  std::vector<std::vector<std::uint8_t>> results(static_cast<std::size_t>(p));
  run_ranks(hosts, nullptr, [&](int r, Hierarchy& hier) {
    std::vector<std::uint8_t> mine(bytes);
    for (std::size_t i = 0; i < bytes; ++i) mine[i] = value<std::uint8_t>(r, i);
    std::vector<std::uint8_t>& out = results[static_cast<std::size_t>(r)];
    out.assign(bytes * static_cast<std::size_t>(p), 0);
    std::uint8_t* own = out.data() + static_cast<std::size_t>(r) * bytes;
    if (in_place) std::memcpy(own, mine.data(), bytes);
    hier.allgather(in_place ? own : mine.data(), out.data(), bytes);
  });
  for (int r = 0; r < p; ++r) {
    for (int q = 0; q < p; ++q) {
      for (std::size_t i = 0; i < bytes; ++i) {
        ASSERT_EQ(results[static_cast<std::size_t>(r)][static_cast<std::size_t>(q) * bytes + i],
                  value<std::uint8_t>(q, i))
            << "rank " << r << ": byte " << i << " of rank " << q << "'s " << bytes;
      }
    }
  }
}

TEST(HierarchicalReduceScatter, ExactOnTwoNodesOfTwoAndThree) {
  check_reduce_scatter<float>(k2x2, DType::kFloat32, many_pieces(4, 4), false);
  check_reduce_scatter<float>(k2x2, DType::kFloat32, 1000, true);
  check_reduce_scatter<std::int32_t>(k2x2, DType::kInt32, 1, false);
  check_reduce_scatter<double>(k2x2, DType::kFloat64, 70001, true);
  check_reduce_scatter<std::uint8_t>(k2x2, DType::kUInt8, 300001, false);
  check_reduce_scatter<float>(k2x3, DType::kFloat32, many_pieces(6, 4), true);
  check_reduce_scatter<std::int64_t>(k2x3, DType::kInt64, 5003, false);
}

TEST(HierarchicalReduceScatter, ExactOnThreeNodesOfTwoFourOfOneAndOneNode) {
  check_reduce_scatter<float>(k3x2, DType::kFloat32, many_pieces(6, 4), false);
  check_reduce_scatter<std::int32_t>(k3x2, DType::kInt32, 65537, true);
  check_reduce_scatter<float>(k4x1, DType::kFloat32, 100003, true);
  check_reduce_scatter<std::uint8_t>(k4x1, DType::kUInt8, 7, false);
  check_reduce_scatter<double>(kOneNode, DType::kFloat64, 40001, false);
}

TEST(HierarchicalReduceScatter, ExactOnRingsOfFiveAndEightNodes) {
  check_reduce_scatter<float>(k5x2, DType::kFloat32, many_pieces(10, 4), false);
  check_reduce_scatter<std::int32_t>(k5x2, DType::kInt32, 65537, true);
  check_reduce_scatter<std::uint8_t>(k5x2, DType::kUInt8, 1, false);
  check_reduce_scatter<double>(k8x1, DType::kFloat64, many_pieces(8, 8), true);
}

TEST(HierarchicalAllgather, ExactOnEveryLayout) {
  for (const auto* hosts : {&k2x2, &k2x3, &k3x2, &k4x1, &k5x2, &k8x1, &kOneNode}) {
    const std::size_t p = hosts->size();
    check_allgather(*hosts, (Hierarchy::kDepth + 3) * Hierarchy::kPieceBytes / p + 5, false);
    check_allgather(*hosts, 3, true);
    check_allgather(*hosts, 100001, true);
  }
  check_allgather(k2x2, 1, false);
}

TEST(HierarchicalCollectives, TakeTurnsOnOneHierarchy) {
  // The node's shared-memory pieces and the pipeline's slots carry on from call to call.
  const int p = 4;
  std::vector<std::vector<float>> gathered(p);
  std::vector<std::vector<float>> scattered(p);
  run_ranks(k2x2, nullptr, [&](int r, Hierarchy& hier) {
    const std::size_t count = 300007;
    std::vector<float> x(count * p);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = value<float>(r, i);
    std::vector<float> sum(x.size());
    hier.allreduce(x.data(), sum.data(), sum.size(), DType::kFloat32, ReduceOp::kSum);
    std::vector<float>& block = scattered[static_cast<std::size_t>(r)];
    block.resize(count);
    hier.reduce_scatter(x.data(), block.data(), count, DType::kFloat32, ReduceOp::kSum);
    std::vector<float>& all = gathered[static_cast<std::size_t>(r)];
    all.resize(count * p);
    hier.allgather(block.data(), all.data(), count * sizeof(float));
    EXPECT_EQ(std::memcmp(all.data(), sum.data(), sum.size() * sizeof(float)), 0) << "rank " << r;
  });
  for (std::size_t i = 0; i < gathered[0].size(); ++i) {
    ASSERT_EQ(gathered[0][i], expected<float>(p, i, ReduceOp::kSum)) << "element " << i;
  }
}

TEST(HierarchicalReduceScatter, NamesAPeerOnAnotherNodeThatNeverSends) {
  dtrain::test::Deadline d;
  EXPECT_THROW(run_ranks({"n1", "n2"}, d.poll,
                         [&](int r, Hierarchy& hier) {
                           if (r == 1) return;  // never arrives
                           d.enter(r, hier);
                           std::vector<float> x(200000, 1.0f);
                           hier.reduce_scatter(x.data(), x.data(), x.size() / 2, DType::kFloat32,
                                               ReduceOp::kSum);
                         }),
               std::runtime_error);
  EXPECT_EQ(
      d.said,
      (std::map<int, std::string>{{0,
                                   "1 (on other nodes; their share of this reduce_scatter has not "
                                   "arrived)"}}));
}

TEST(HierarchicalAllgather, NamesARankOfThisNodeThatNeverArrives) {
  dtrain::test::Deadline d;
  EXPECT_THROW(run_ranks({"n1", "n2", "n1", "n2"}, d.poll,
                         [&](int r, Hierarchy& hier) {
                           if (r == 2) return;
                           d.enter(r, hier);
                           std::vector<char> x(4 * 100000, 'x');
                           hier.allgather(x.data(), x.data(), 100000);
                         }),
               std::runtime_error);
  // Rank 0 has its share from node n2 and waits for rank 2 in the node's gather; rank 3 receives
  // from rank 2 (one-way pairs) and waits on the network; rank 1 waits for rank 3 in its node's.
  EXPECT_EQ(d.said, (std::map<int, std::string>{
                        {0, "2 (on this node, not yet in this allgather)"},
                        {1, "3 (on this node, not yet in this allgather)"},
                        {3, "2 (on other nodes; their share of this allgather has not arrived)"}}));
}

}  // namespace
