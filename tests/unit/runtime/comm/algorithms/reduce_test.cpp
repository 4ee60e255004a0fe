// The host reductions behind the TCP ring and the MPI point-to-point allreduce: out = a op b for
// every type, in place on either operand, and the operand order that keeps ranks' bits equal.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "comm/algorithms/half.hpp"
#include "comm/algorithms/reduce.hpp"

namespace {

using dtrain::DType;
using dtrain::ReduceOp;
using dtrain::runtime::reduce_into;
using dtrain::runtime::reduce_to;

TEST(ReduceTo, EveryOpOnInt32) {
  const std::vector<std::int32_t> a = {1, -4, 7, 0};
  const std::vector<std::int32_t> b = {3, 5, -2, 9};
  std::vector<std::int32_t> out(4);
  reduce_to(out.data(), a.data(), b.data(), 4, DType::kInt32, ReduceOp::kSum);
  EXPECT_EQ(out, (std::vector<std::int32_t>{4, 1, 5, 9}));
  reduce_to(out.data(), a.data(), b.data(), 4, DType::kInt32, ReduceOp::kMin);
  EXPECT_EQ(out, (std::vector<std::int32_t>{1, -4, -2, 0}));
  reduce_to(out.data(), a.data(), b.data(), 4, DType::kInt32, ReduceOp::kMax);
  EXPECT_EQ(out, (std::vector<std::int32_t>{3, 5, 7, 9}));
  reduce_to(out.data(), a.data(), b.data(), 4, DType::kInt32, ReduceOp::kProduct);
  EXPECT_EQ(out, (std::vector<std::int32_t>{3, -20, -14, 0}));
}

TEST(ReduceTo, InPlaceOnEitherOperand) {
  std::vector<double> a = {1.5, 2.5};
  std::vector<double> b = {0.25, 4.0};
  reduce_to(b.data(), a.data(), b.data(), 2, DType::kFloat64, ReduceOp::kSum);
  EXPECT_EQ(b, (std::vector<double>{1.75, 6.5}));
  reduce_to(a.data(), a.data(), b.data(), 2, DType::kFloat64, ReduceOp::kMax);
  EXPECT_EQ(a, (std::vector<double>{1.75, 6.5}));
  std::vector<std::uint8_t> c = {200, 3};
  const std::vector<std::uint8_t> d = {100, 4};
  reduce_into(c.data(), d.data(), 2, DType::kUInt8, ReduceOp::kSum);
  EXPECT_EQ(c, (std::vector<std::uint8_t>{44, 7}));  // wraps modulo 256, as MPI_UINT8_T does
}

TEST(ReduceTo, SixteenBitTypesReduceThroughFloat) {
  using dtrain::runtime::bfloat16_to_float;
  using dtrain::runtime::float_to_bfloat16;
  std::vector<std::uint16_t> a(3000);
  std::vector<std::uint16_t> b(3000);  // more than one 1024-element block
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = float_to_bfloat16(static_cast<float>(i % 100));
    b[i] = float_to_bfloat16(2.0f);
  }
  reduce_to(a.data(), a.data(), b.data(), a.size(), DType::kBFloat16, ReduceOp::kSum);
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(bfloat16_to_float(a[i]), static_cast<float>(i % 100 + 2)) << "element " << i;
  }
}

TEST(ReduceTo, OperandOrderDecidesNaNInMinMax) {
  // std::min/max keep their first operand when a NaN makes the comparison false, so two ranks
  // reducing (theirs op mine) in opposite orders would disagree; the point-to-point allreduce
  // always passes the lower rank's data first, and both partners get this same answer.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float low[1] = {1.0f};
  const float high[1] = {nan};
  float first[1];
  float second[1];
  reduce_to(first, low, high, 1, DType::kFloat32, ReduceOp::kMin);
  reduce_to(second, low, high, 1, DType::kFloat32, ReduceOp::kMin);
  EXPECT_EQ(first[0], 1.0f);
  EXPECT_EQ(second[0], first[0]);
  reduce_to(first, high, low, 1, DType::kFloat32, ReduceOp::kMin);
  EXPECT_TRUE(std::isnan(first[0]));  // the other order: why the order is fixed
}

}  // namespace
