// The single-process communicator through the public Comm handle: every dtype and op is exact, and
// misuse is a dtrain::Error with a message, the same checks every backend gets.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <dtrain/dtrain.hpp>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace {

dtrain::Context bare_context() {
  unsetenv("PMIX_NAMESPACE");
  unsetenv("PMIX_RANK");
  unsetenv("DTRAIN_BOOTSTRAP");
  return dtrain::init();
}

template <typename T>
class SingleAllreduce : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::int32_t, std::int64_t, std::uint8_t>;
TYPED_TEST_SUITE(SingleAllreduce, Types);

template <typename T>
std::vector<T> sample() {
  // Extremes and signs: a copy must keep every bit, a conversion would not.
  return {T{0},
          T{1},
          static_cast<T>(-7),  // 249 for uint8
          std::numeric_limits<T>::max(),
          std::numeric_limits<T>::lowest(),
          std::numeric_limits<T>::min()};
}

TYPED_TEST(SingleAllreduce, EveryOpIsExactOutOfPlaceAndInPlace) {
  using T = TypeParam;
  dtrain::Context ctx = bare_context();
  std::vector<dtrain::ReduceOp> ops = {dtrain::ReduceOp::kSum, dtrain::ReduceOp::kMin,
                                       dtrain::ReduceOp::kMax};
  if (std::is_floating_point_v<T>) ops.push_back(dtrain::ReduceOp::kAvg);
  for (dtrain::ReduceOp op : ops) {
    SCOPED_TRACE(std::string(dtrain::to_string(dtrain::dtype_of<T>())) + " " +
                 std::string(dtrain::to_string(op)));
    const std::vector<T> in = sample<T>();
    std::vector<T> out(in.size(), T{42});
    ctx.comm().allreduce(std::span<const T>(in), std::span<T>(out), op);
    EXPECT_EQ(out, in);
    std::vector<T> inout = sample<T>();
    ctx.comm().allreduce(std::span<T>(inout), op);
    EXPECT_EQ(inout, in);
  }
}

TYPED_TEST(SingleAllreduce, BroadcastFromRankZeroKeepsTheData) {
  using T = TypeParam;
  dtrain::Context ctx = bare_context();
  std::vector<T> buf = sample<T>();
  ctx.comm().broadcast(std::span<T>(buf), 0);
  EXPECT_EQ(buf, sample<T>());
}

TYPED_TEST(SingleAllreduce, TypedAllgatherAndReduceScatterKeepTheData) {
  using T = TypeParam;
  dtrain::Context ctx = bare_context();
  const std::vector<T> in = sample<T>();
  std::vector<T> out(in.size());
  ctx.comm().allgather<T>(in, std::span<T>(out));
  EXPECT_EQ(out, in);
  std::vector<T> block(in.size());
  ctx.comm().reduce_scatter<T>(in, std::span<T>(block), dtrain::ReduceOp::kMax);
  EXPECT_EQ(block, in);
  std::vector<T> inplace = sample<T>();
  ctx.comm().reduce_scatter<T>(inplace, std::span<T>(inplace), dtrain::ReduceOp::kSum);
  EXPECT_EQ(inplace, in);
}

TEST(SingleComm, TypedInputConvertsFromAVector) {
  dtrain::Context ctx = bare_context();
  const std::vector<double> in = {0.5, 2.0};
  std::vector<double> out(2);
  ctx.comm().allreduce<double>(in, std::span<double>(out), dtrain::ReduceOp::kSum);
  EXPECT_EQ(out, in);
}

TEST(SingleComm, EmptyBuffersAreFine) {
  dtrain::Context ctx = bare_context();
  ctx.comm().allreduce(nullptr, nullptr, 0, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum);
  ctx.comm().allreduce(std::span<float>(), dtrain::ReduceOp::kAvg);
  ctx.comm().broadcast(nullptr, 0, dtrain::DType::kInt64, 0);
  ctx.comm().barrier();
}

std::string comm_error(const std::function<void()>& call) {
  try {
    call();
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(SingleComm, AverageOfIntegersIsAnError) {
  dtrain::Context ctx = bare_context();
  std::vector<std::int32_t> i32 = {1, 2};
  EXPECT_EQ(comm_error([&] {
              ctx.comm().allreduce(std::span<std::int32_t>(i32), dtrain::ReduceOp::kAvg);
            }),
            "dtrain: allreduce: avg is defined for floating types; expected float32, float64, "
            "float16 or bfloat16 (or sum), got int32");
  std::vector<std::int64_t> i64 = {1, 2};
  EXPECT_EQ(comm_error([&] {
              ctx.comm().allreduce(std::span<std::int64_t>(i64), dtrain::ReduceOp::kAvg);
            }),
            "dtrain: allreduce: avg is defined for floating types; expected float32, float64, "
            "float16 or bfloat16 (or sum), got int64");
  EXPECT_EQ(i32, (std::vector<std::int32_t>{1, 2})) << "a rejected call leaves the data alone";
  // The message names the collective called.
  std::vector<std::uint8_t> u8 = {1, 2};
  std::vector<std::uint8_t> u8_out(2);
  EXPECT_EQ(comm_error([&] {
              ctx.comm().reduce_scatter(u8.data(), u8_out.data(), 2, dtrain::DType::kUInt8,
                                        dtrain::ReduceOp::kAvg);
            }),
            "dtrain: reduce_scatter: avg is defined for floating types; expected float32, "
            "float64, float16 or bfloat16 (or sum), got uint8");
  EXPECT_EQ(comm_error([&] {
              ctx.comm().reduce_scatter_async(i32.data(), i32.data(), 2, dtrain::DType::kInt32,
                                              dtrain::ReduceOp::kAvg);
            }),
            "dtrain: reduce_scatter: avg is defined for floating types; expected float32, "
            "float64, float16 or bfloat16 (or sum), got int32");
}

TEST(SingleComm, MismatchedSpansAreAnError) {
  dtrain::Context ctx = bare_context();
  std::vector<float> a(2), b(3);
  EXPECT_EQ(comm_error([&] {
              ctx.comm().allreduce(std::span<const float>(a), std::span<float>(b),
                                   dtrain::ReduceOp::kSum);
            }),
            "dtrain: allreduce: output size differs from input size; expected 2 elements, got 3");
  EXPECT_EQ(comm_error([&] { ctx.comm().allgather<float>(a, std::span<float>(b)); }),
            "dtrain: allgather: output size differs from size() times the input size; expected 2 "
            "elements, got 3");
  EXPECT_EQ(comm_error([&] {
              ctx.comm().reduce_scatter<float>(b, std::span<float>(a), dtrain::ReduceOp::kSum);
            }),
            "dtrain: reduce_scatter: input size differs from size() times the output size; "
            "expected 2 elements, got 3");
}

TEST(SingleComm, PartlyOverlappingBuffersAreAnError) {
  dtrain::Context ctx = bare_context();
  std::vector<double> v(4);
  EXPECT_EQ(comm_error([&] {
              ctx.comm().allreduce(v.data(), v.data() + 1, 3, dtrain::DType::kFloat64,
                                   dtrain::ReduceOp::kSum);
            }),
            "dtrain: allreduce: input and output overlap; expected the same buffer (in place) or "
            "disjoint ones");
  // Adjacent is not overlapping.
  ctx.comm().allreduce(v.data(), v.data() + 2, 2, dtrain::DType::kFloat64, dtrain::ReduceOp::kSum);
}

TEST(SingleComm, NullBuffersAreAnError) {
  dtrain::Context ctx = bare_context();
  float x = 1;
  EXPECT_EQ(comm_error([&] {
              ctx.comm().allreduce(nullptr, &x, 1, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum);
            }),
            "dtrain: allreduce: input buffer; expected a pointer to 1 elements, got null");
  EXPECT_EQ(comm_error([&] {
              ctx.comm().allreduce(&x, nullptr, 1, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum);
            }),
            "dtrain: allreduce: output buffer; expected a pointer to 1 elements, got null");
}

TEST(SingleComm, BroadcastRootMustExist) {
  dtrain::Context ctx = bare_context();
  std::vector<float> buf(2);
  EXPECT_EQ(comm_error([&] { ctx.comm().broadcast(std::span<float>(buf), 1); }),
            "dtrain: broadcast: root rank out of range; expected 0 to 0, got 1");
  EXPECT_EQ(comm_error([&] { ctx.comm().broadcast(std::span<float>(buf), -1); }),
            "dtrain: broadcast: root rank out of range; expected 0 to 0, got -1");
}

TEST(SingleComm, UnknownOpIsAnError) {
  dtrain::Context ctx = bare_context();
  float x = 1;
  EXPECT_EQ(comm_error([&] {
              ctx.comm().allreduce(&x, &x, 1, dtrain::DType::kFloat32,
                                   static_cast<dtrain::ReduceOp>(9));
            }),
            "dtrain: allreduce: unknown reduce op; expected sum, avg, min, max or product (0-4), "
            "got 9");
}

TEST(SingleComm, NullBroadcastBufferIsAnError) {
  dtrain::Context ctx = bare_context();
  EXPECT_EQ(comm_error([&] { ctx.comm().broadcast(nullptr, 2, dtrain::DType::kInt32, 0); }),
            "dtrain: broadcast: data buffer; expected a pointer to 2 elements, got null");
}

TEST(DType, UnknownTypeIsAnError) {
  EXPECT_EQ(
      comm_error([] { (void)dtrain::dtype_size(static_cast<dtrain::DType>(7)); }),
      "dtrain: dtype: unknown value; expected kFloat32, kFloat64, kInt32, kInt64, kUInt8, kFloat16 "
      "or kBFloat16, got 7");
}

TEST(DType, SizesAndNames) {
  EXPECT_EQ(dtrain::dtype_size(dtrain::DType::kFloat32), 4u);
  EXPECT_EQ(dtrain::dtype_size(dtrain::DType::kFloat64), 8u);
  EXPECT_EQ(dtrain::dtype_size(dtrain::DType::kInt32), 4u);
  EXPECT_EQ(dtrain::dtype_size(dtrain::DType::kInt64), 8u);
  EXPECT_EQ(dtrain::dtype_of<float>(), dtrain::DType::kFloat32);
  EXPECT_EQ(dtrain::dtype_of<std::int64_t>(), dtrain::DType::kInt64);
  EXPECT_EQ(dtrain::to_string(dtrain::DType::kFloat64), "float64");
  EXPECT_EQ(dtrain::to_string(dtrain::ReduceOp::kAvg), "avg");
}

}  // namespace
