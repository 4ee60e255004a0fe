// The one-rank communicator (single_communicator.cpp): every collective leaves exactly this rank's
// data, kAvg included (nothing is divided, so values that do not survive x * 1 / 1 survive here).
#include "comm/single_communicator.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

namespace dtrain::runtime {
namespace {

TEST(SingleCommunicator, DescribesOneLocalRank) {
  auto comm = make_single_communicator();
  EXPECT_EQ(comm->backend(), "single");
  EXPECT_EQ(comm->allreduce_transport(), "single");
  EXPECT_FALSE(comm->remote());
}

TEST(SingleCommunicator, AllreduceCopiesForEveryOp) {
  auto comm = make_single_communicator();
  const std::vector<std::int64_t> in = {-3, 0, 7, INT64_MAX};
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct}) {
    std::vector<std::int64_t> out(4, 99);
    comm->allreduce(in.data(), out.data(), in.size(), DType::kInt64, op);
    EXPECT_EQ(out, in) << to_string(op);
  }
}

TEST(SingleCommunicator, AverageOfOneRankIsExact) {
  auto comm = make_single_communicator();
  const std::vector<float> in = {0.1f, -1e-38f, 3.4e38f, 1.0f / 3.0f};
  std::vector<float> out(4, 0.0f);
  comm->allreduce(in.data(), out.data(), in.size(), DType::kFloat32, ReduceOp::kAvg);
  EXPECT_EQ(out, in);
  std::vector<double> in_place = {0.1, 2.5e-308};
  comm->allreduce(in_place.data(), in_place.data(), 2, DType::kFloat64, ReduceOp::kAvg);
  EXPECT_EQ(in_place, (std::vector<double>{0.1, 2.5e-308}));
}

TEST(SingleCommunicator, ReduceScatterAndAllgatherCopyTheOneBlock) {
  auto comm = make_single_communicator();
  const std::vector<std::int32_t> in = {1, 2, 3};
  std::vector<std::int32_t> scattered(3, 0);
  comm->reduce_scatter(in.data(), scattered.data(), 3, DType::kInt32, ReduceOp::kSum);
  EXPECT_EQ(scattered, in);
  const std::vector<float> thirds = {1.0f / 3.0f, 0.1f};
  std::vector<float> averaged(2, 0.0f);
  comm->reduce_scatter(thirds.data(), averaged.data(), 2, DType::kFloat32, ReduceOp::kAvg);
  EXPECT_EQ(averaged, thirds);
  std::vector<std::uint8_t> bytes = {9, 8};
  std::vector<std::uint8_t> gathered(2, 0);
  comm->allgather(bytes.data(), gathered.data(), 2, DType::kUInt8);
  EXPECT_EQ(gathered, bytes);
}

TEST(SingleCommunicator, BroadcastAndBarrierLeaveDataAlone) {
  auto comm = make_single_communicator();
  std::vector<double> buf = {1.5, -2.5};
  comm->broadcast(buf.data(), buf.size(), DType::kFloat64, 0);
  comm->barrier();
  EXPECT_EQ(buf, (std::vector<double>{1.5, -2.5}));
}

TEST(SingleCommunicator, HasNoManyBufferPathSoTheCallerPacks) {
  auto comm = make_single_communicator();
  const float in = 1.0f;
  float out = 2.0f;
  const AllreducePart part{&in, &out, 1};
  EXPECT_FALSE(comm->allreduce_parts(std::span(&part, 1), DType::kFloat32, ReduceOp::kSum));
  EXPECT_EQ(out, 2.0f);
}

TEST(SingleCommunicator, ZeroElementsTouchNothing) {
  auto comm = make_single_communicator();
  const float in = 1.0f;
  float out = 2.0f;
  comm->allreduce(&in, &out, 0, DType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(out, 2.0f);
}

}  // namespace
}  // namespace dtrain::runtime
