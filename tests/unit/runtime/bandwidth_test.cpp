#include <gtest/gtest.h>
#include <dtrain/bandwidth.hpp>

// The values nccl-tests' all_reduce_perf prints for the same algbw, so the figures compare.
TEST(Bandwidth, AllreduceBusFactorIsNcclTests) {
  EXPECT_DOUBLE_EQ(dtrain::allreduce_bus_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(dtrain::allreduce_bus_factor(4), 1.5);
  EXPECT_DOUBLE_EQ(dtrain::allreduce_bus_factor(8), 1.75);
  EXPECT_DOUBLE_EQ(dtrain::allreduce_bus_bandwidth(10.0, 16), 18.75);
}

TEST(Bandwidth, OneRankMovesNothing) {
  EXPECT_DOUBLE_EQ(dtrain::allreduce_bus_factor(1), 0.0);
  EXPECT_DOUBLE_EQ(dtrain::allreduce_bus_bandwidth(3.0, 1), 0.0);
}

// all_gather_perf's and reduce_scatter_perf's factor, S being the whole buffer.
TEST(Bandwidth, AllgatherAndReduceScatterBusFactorIsNcclTests) {
  EXPECT_DOUBLE_EQ(dtrain::allgather_bus_factor(2), 0.5);
  EXPECT_DOUBLE_EQ(dtrain::allgather_bus_factor(4), 0.75);
  EXPECT_DOUBLE_EQ(dtrain::reduce_scatter_bus_factor(8), 0.875);
  EXPECT_DOUBLE_EQ(dtrain::allgather_bus_factor(1), 0.0);
  EXPECT_DOUBLE_EQ(dtrain::reduce_scatter_bus_factor(1), 0.0);
}
