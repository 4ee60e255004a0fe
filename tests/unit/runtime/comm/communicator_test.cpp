// Communicator's one place for kAvg (communicator.cpp): a backend gets kSum and the sum is divided
// once, unless the backend averages that type itself. A fake backend plays `size` ranks that all
// hold the same data, so a sum is the data times size and the average is the data again.
#include "comm/communicator.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "comm/algorithms/half.hpp"
#include "comm/algorithms/reduce.hpp"

namespace {

using dtrain::DType;
using dtrain::ReduceOp;
using dtrain::runtime::AllreducePart;

class SameDataRanks final : public dtrain::runtime::Communicator {
 public:
  SameDataRanks(int size, bool averages_16bit, bool has_parts)
      : Communicator(size), size_(size), averages_16bit_(averages_16bit), has_parts_(has_parts) {}
  void broadcast(void*, std::size_t, DType, int) override {}
  void allgather(const void*, void*, std::size_t, DType) override {}
  void barrier() override {}
  std::string_view backend() const override { return "same-data"; }

  std::vector<ReduceOp> received;  // the op of every reduction the backend was asked for

 protected:
  void do_allreduce(const void* in, void* out, std::size_t count, DType type,
                    ReduceOp op) override {
    received.push_back(op);
    reduce(in, out, count, type, op);
  }
  bool do_allreduce_parts(std::span<const AllreducePart> parts, DType type, ReduceOp op) override {
    if (!has_parts_) return false;
    received.push_back(op);
    for (const AllreducePart& p : parts) reduce(p.in, p.out, p.count, type, op);
    return true;
  }
  void do_reduce_scatter(const void* in, void* out, std::size_t count, DType type,
                         ReduceOp op) override {
    received.push_back(op);
    reduce(in, out, count, type, op);  // this rank's block is the first
  }
  bool averages(DType type) const override {
    return averages_16bit_ && dtrain::runtime::is_16bit_float(type);
  }

 private:
  // `size` equal contributions: kSum (and kAvg, summed like every kernel) is the data times size;
  // kMin, kMax keep it. kAvg, when this backend averages, is the data itself.
  void reduce(const void* in, void* out, std::size_t count, DType type, ReduceOp op) const {
    std::memmove(out, in, count * dtrain::dtype_size(type));
    if (op == ReduceOp::kAvg && averages(type)) return;
    if (op != ReduceOp::kSum && op != ReduceOp::kAvg) return;
    std::vector<char> one(count * dtrain::dtype_size(type));
    std::memcpy(one.data(), out, one.size());
    for (int r = 1; r < size_; ++r) dtrain::runtime::reduce_into(out, one.data(), count, type, op);
  }

  int size_;
  bool averages_16bit_;
  bool has_parts_;
};

TEST(Communicator, AnAverageIsASumDividedOnce) {
  SameDataRanks comm(4, false, false);
  std::vector<float> f = {1.5f, -3.0f, 0.0f, 1024.0f};
  const std::vector<float> f_in = f;
  comm.allreduce(f.data(), f.data(), f.size(), DType::kFloat32, ReduceOp::kAvg);
  EXPECT_EQ(f, f_in);
  std::vector<double> d = {0.25, -7.0};
  std::vector<double> d_out(2);
  comm.allreduce(d.data(), d_out.data(), d.size(), DType::kFloat64, ReduceOp::kAvg);
  EXPECT_EQ(d_out, d);
  std::vector<std::uint16_t> h = {dtrain::runtime::float_to_half(2.5f),
                                  dtrain::runtime::float_to_half(-0.5f)};
  const std::vector<std::uint16_t> h_in = h;
  comm.allreduce(h.data(), h.data(), h.size(), DType::kFloat16, ReduceOp::kAvg);
  EXPECT_EQ(h, h_in);
  EXPECT_EQ(comm.received, (std::vector<ReduceOp>(3, ReduceOp::kSum)));
}

TEST(Communicator, OtherOpsPassThroughUndivided) {
  SameDataRanks comm(4, false, false);
  std::vector<float> f = {1.5f, -3.0f};
  comm.allreduce(f.data(), f.data(), f.size(), DType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(f, (std::vector<float>{6.0f, -12.0f}));
  comm.allreduce(f.data(), f.data(), f.size(), DType::kFloat32, ReduceOp::kMax);
  EXPECT_EQ(f, (std::vector<float>{6.0f, -12.0f}));
  EXPECT_EQ(comm.received, (std::vector<ReduceOp>{ReduceOp::kSum, ReduceOp::kMax}));
}

TEST(Communicator, ABackendThatAveragesATypeGetsKAvgAndNoSecondDivision) {
  SameDataRanks comm(4, true, false);
  std::vector<std::uint16_t> b = {dtrain::runtime::float_to_bfloat16(3.0f)};
  const std::vector<std::uint16_t> b_in = b;
  comm.allreduce(b.data(), b.data(), b.size(), DType::kBFloat16, ReduceOp::kAvg);
  EXPECT_EQ(b, b_in);
  std::vector<float> f = {8.0f};
  comm.allreduce(f.data(), f.data(), f.size(), DType::kFloat32, ReduceOp::kAvg);
  EXPECT_EQ(f, (std::vector<float>{8.0f}));
  EXPECT_EQ(comm.received, (std::vector<ReduceOp>{ReduceOp::kAvg, ReduceOp::kSum}));
}

TEST(Communicator, EveryPartOfAnAverageIsDividedOnce) {
  SameDataRanks comm(2, false, true);
  std::vector<float> a = {1.0f, 2.0f, 3.0f};
  std::vector<float> b = {-4.0f};
  const std::vector<AllreducePart> parts = {{a.data(), a.data(), a.size()},
                                            {b.data(), b.data(), b.size()}};
  ASSERT_TRUE(comm.allreduce_parts(parts, DType::kFloat32, ReduceOp::kAvg));
  EXPECT_EQ(a, (std::vector<float>{1.0f, 2.0f, 3.0f}));
  EXPECT_EQ(b, (std::vector<float>{-4.0f}));
  EXPECT_EQ(comm.received, (std::vector<ReduceOp>{ReduceOp::kSum}));
}

TEST(Communicator, WithoutAPartsPathNothingIsTouched) {
  SameDataRanks comm(2, false, false);
  std::vector<float> a = {1.0f, 2.0f};
  const std::vector<AllreducePart> parts = {{a.data(), a.data(), a.size()}};
  EXPECT_FALSE(comm.allreduce_parts(parts, DType::kFloat32, ReduceOp::kAvg));
  EXPECT_EQ(a, (std::vector<float>{1.0f, 2.0f}));
  EXPECT_TRUE(comm.received.empty());
}

TEST(Communicator, AReduceScatterAverageIsDividedOnce) {
  SameDataRanks comm(3, false, false);
  std::vector<double> in = {1.5, -6.0, 9.0, 0.0, 0.0, 0.0};  // 3 ranks x 2 elements
  std::vector<double> out(2);
  comm.reduce_scatter(in.data(), out.data(), out.size(), DType::kFloat64, ReduceOp::kAvg);
  EXPECT_EQ(out, (std::vector<double>{1.5, -6.0}));
  EXPECT_EQ(comm.received, (std::vector<ReduceOp>{ReduceOp::kSum}));
}

}  // namespace
