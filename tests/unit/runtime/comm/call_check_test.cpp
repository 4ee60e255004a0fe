// What ranks passed to one collective, in the words every rank prints when they differ
// (comm/call_check.cpp): each kind of call, and the packed word the TCP headers carry.
#include "comm/call_check.hpp"

#include <gtest/gtest.h>

namespace dtrain::runtime {
namespace {

TEST(CallCheck, EachCallIsDescribedAsTheRankMadeIt) {
  using K = CallWhat::Kind;
  EXPECT_EQ(describe_call(4097, {K::kAllreduce, DType::kFloat32, ReduceOp::kSum}),
            "passed 4097 float32 elements (sum)");
  EXPECT_EQ(describe_call(10, {K::kReduceScatter, DType::kFloat64, ReduceOp::kMax}),
            "passed 10 float64 elements to reduce_scatter (max)");
  EXPECT_EQ(describe_call(3, {K::kAllgather, DType::kInt32, ReduceOp::kSum}),
            "passed 3 int32 elements to allgather");
  EXPECT_EQ(describe_call(8, {K::kBroadcast, DType::kUInt8, ReduceOp::kSum, 1023}),
            "passed 8 uint8 elements to broadcast from root 1023");
  EXPECT_EQ(describe_call(1, {K::kBarrier, DType::kInt32, ReduceOp::kMin}), "called barrier");
  EXPECT_EQ(describe_call(1, {K::kFinalize, DType::kInt32, ReduceOp::kMin}),
            "was ending its communicator (the Context's destruction)");
}

TEST(CallCheck, ThePackedWordTellsEveryFieldBackAndDiffersWithAny) {
  const CallWhat a{CallWhat::Kind::kBroadcast, DType::kBFloat16, ReduceOp::kProduct, 70000};
  const CallWhat back = CallWhat::unpack(a.pack());
  EXPECT_EQ(back.kind, a.kind);
  EXPECT_EQ(back.type, a.type);
  EXPECT_EQ(back.op, a.op);
  EXPECT_EQ(back.root, a.root);
  CallWhat b = a;
  b.root = 70001;
  EXPECT_NE(CallHeader::of(5, a), CallHeader::of(5, b));
  EXPECT_NE(CallHeader::of(5, a), CallHeader::of(6, a));
  EXPECT_EQ(CallHeader::of(5, a), CallHeader::of(5, back));
}

TEST(CallCheck, TheTextNamesTheFirstCallAndEachRankThatDiffered) {
  const CallWhat sum{};
  CallWhat wide = sum;
  wide.type = DType::kFloat64;
  const std::string text =
      mismatch_text("ranks", {{0, 16, sum}, {1, 16, sum}, {2, 16, wide}, {3, 16, sum}});
  EXPECT_EQ(text,
            "ranks passed different calls to one collective: rank 0 passed 16 float32 elements "
            "(sum), rank 2 passed 16 float64 elements (sum); every rank must pass the same "
            "number of elements, element type and operation");
}

// Issue 45 item 4: a broadcast has a root where the others have an operation, and ranks in
// different collectives are told to call the same one.
TEST(CallCheck, TheTextAsksForTheSameRootOrTheSameCollective) {
  using K = CallWhat::Kind;
  const CallWhat from0{K::kBroadcast, DType::kFloat32, ReduceOp::kSum, 0};
  CallWhat from1 = from0;
  from1.root = 1;
  EXPECT_EQ(mismatch_text("ranks", {{0, 8, from0}, {1, 8, from1}}),
            "ranks passed different calls to one collective: rank 0 passed 8 float32 elements to "
            "broadcast from root 0, rank 1 passed 8 float32 elements to broadcast from root 1; "
            "every rank must pass the same number of elements, element type and root");
  EXPECT_EQ(mismatch_text("ranks", {{0, 8, CallWhat{}}, {1, 8, from0}}),
            "ranks passed different calls to one collective: rank 0 passed 8 float32 elements "
            "(sum), rank 1 passed 8 float32 elements to broadcast from root 0; every rank must "
            "call the same collective and pass the same number of elements, element type and "
            "operation");
}

}  // namespace
}  // namespace dtrain::runtime
