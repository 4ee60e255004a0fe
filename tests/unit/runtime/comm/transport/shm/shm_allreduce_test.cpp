// ShmAllreduce with threads as ranks over segments in this process's memory, in both layouts
// (direct reads of the peers' buffers, inboxes and outboxes): every op and dtype exact on
// integer-valued data (one-shot, two-shot, several pieces, odd counts, in and out of place),
// identical bits on every rank and in both layouts, the same bits as the scalar kernel
// (reduce_to) on random data with NaNs and signed zeros, the layout chosen by ranks per node,
// fused parts across share boundaries, the hierarchy's piece halves, and a rank that never
// arrives named at the deadline.
#include "comm/transport/shm/shm_allreduce.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "comm/algorithms/reduce.hpp"
#include "shm_ranks.hpp"

namespace {

using namespace shm_test;

TEST(ShmAllreduce, EveryOpAndTypeExactOnIntegerValuedData) {
  const DType types[] = {DType::kFloat32, DType::kFloat64, DType::kInt32,   DType::kInt64,
                         DType::kUInt8,   DType::kFloat16, DType::kBFloat16};
  const ReduceOp ops[] = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct};
  // One element; one-shot; just over the one-shot size for float32; several pieces, odd counts.
  const std::size_t counts[] = {1, 1000, ShmAllreduce::kOneShotBytes / 4 + 3,
                                ShmAllreduce::kPieceBytes / 8 * 5 + 13};
  for (Layout layout : {Layout::kDirect, Layout::kBoxes}) {
    for (int p : {2, 3, 4}) {
      run_ranks(
          p,
          [&](int rank, ShmAllreduce& shm) {
            ASSERT_EQ(shm.layout(), layout);
            int call = 0;
            for (DType type : types) {
              const std::size_t elem = dtrain::dtype_size(type);
              for (ReduceOp op : ops) {
                for (std::size_t count : counts) {
                  std::vector<char> in(count * elem);
                  std::vector<char> want(count * elem);
                  for (std::size_t i = 0; i < count; ++i) {
                    encode(type, value(op, type, rank, i), in.data() + i * elem);
                    double w = value(op, type, 0, i);
                    for (int r = 1; r < p; ++r) w = combine(op, w, value(op, type, r, i));
                    encode(type, w, want.data() + i * elem);
                  }
                  const bool in_place = ++call % 2 == 0;
                  std::vector<char> out(in_place ? 0 : count * elem);
                  char* result = in_place ? in.data() : out.data();
                  shm.allreduce(in.data(), result, count, type, op);
                  for (std::size_t i = 0; i < count; ++i) {
                    ASSERT_EQ(std::memcmp(result + i * elem, want.data() + i * elem, elem), 0)
                        << layout_name(layout) << ", ranks " << p << ", rank " << rank << ", dtype "
                        << dtrain::to_string(type) << ", op " << static_cast<int>(op) << ", count "
                        << count << ", element " << i;
                  }
                }
              }
            }
          },
          layout);
    }
  }
}

TEST(ShmAllreduce, EveryRankGetsTheSameBitsInEitherLayout) {
  // Rounding depends on the order of the operands; every rank must combine them in the same one,
  // and both layouts in rank order. The data round differently in every order (a mix of
  // magnitudes), so a rank or a layout that combined them otherwise differs.
  const std::size_t count = ShmAllreduce::kPieceBytes / 4 * 2 + 777;
  for (int p : {2, 3, 4, 5}) {
    std::vector<std::vector<float>> first_layout;
    for (Layout layout : {Layout::kDirect, Layout::kBoxes}) {
      std::vector<std::vector<float>> results(static_cast<std::size_t>(p));
      run_ranks(
          p,
          [&](int rank, ShmAllreduce& shm) {
            std::mt19937 gen(static_cast<unsigned>(rank) + 1);
            std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
            std::vector<float> data(count);
            for (float& x : data) x = dist(gen) * 1e-3f + dist(gen) * 1e3f;
            shm.allreduce(data.data(), data.data(), count, DType::kFloat32, ReduceOp::kSum);
            results[static_cast<std::size_t>(rank)] = std::move(data);
          },
          layout);
      for (int r = 1; r < p; ++r) {
        ASSERT_EQ(std::memcmp(results[0].data(), results[static_cast<std::size_t>(r)].data(),
                              count * sizeof(float)),
                  0)
            << layout_name(layout) << ", ranks " << p << ": rank " << r << " differs from rank 0";
      }
      if (first_layout.empty()) {
        first_layout = results;
      } else {
        ASSERT_EQ(std::memcmp(first_layout[0].data(), results[0].data(), count * sizeof(float)), 0)
            << "ranks " << p << ": the layouts give different bits";
      }
    }
  }
}

// Random operands, with NaNs, infinities, signed zeros and subnormals among them, reduced by the
// layouts' kernels must give exactly what the scalar kernel (reduce_to) gives when it combines
// them in rank order: the same IEEE operations, and the operand std::min/std::max pick.
template <typename T>
void same_bits_as_scalar_kernel(DType type) {
  const ReduceOp ops[] = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct};
  // One-shot, two-shot with a ragged end, several pieces.
  const std::size_t counts[] = {37, ShmAllreduce::kOneShotBytes / sizeof(T) + 29,
                                ShmAllreduce::kPieceBytes / sizeof(T) * 2 + 61};
  for (int p : {2, 3}) {
    for (Layout layout : {Layout::kDirect, Layout::kBoxes}) {
      run_ranks(
          p,
          [&](int rank, ShmAllreduce& shm) {
            for (ReduceOp op : ops) {
              for (std::size_t count : counts) {
                std::vector<T> want = awkward_values<T>(count, 1);
                for (int r = 1; r < p; ++r) {
                  const std::vector<T> x = awkward_values<T>(count, static_cast<unsigned>(r) + 1);
                  dtrain::runtime::reduce_to(want.data(), want.data(), x.data(), count, type, op);
                }
                std::vector<T> data = awkward_values<T>(count, static_cast<unsigned>(rank) + 1);
                std::vector<T> out(count);
                shm.allreduce(data.data(), out.data(), count, type, op);
                for (std::size_t i = 0; i < count; ++i) {
                  if (std::memcmp(&out[i], &want[i], sizeof(T)) == 0) continue;
                  // A sum or product that is NaN may be any NaN: which operand's payload an
                  // IEEE operation passes on is the hardware's choice, and the compiler may swap
                  // the operands of a scalar + or *. (Every rank still gets the same bits: one
                  // rank reduces each element.) min and max must pick the same operand.
                  bool nan_alike = false;
                  if constexpr (std::is_floating_point_v<T>) {
                    nan_alike = (op == ReduceOp::kSum || op == ReduceOp::kProduct) &&
                                std::isnan(out[i]) && std::isnan(want[i]);
                  }
                  ASSERT_TRUE(nan_alike)
                      << layout_name(layout) << ", ranks " << p << ", rank " << rank << ", dtype "
                      << dtrain::to_string(type) << ", op " << static_cast<int>(op) << ", count "
                      << count << ", element " << i << ": " << +out[i] << " against " << +want[i];
                }
              }
            }
          },
          layout);
    }
  }
}

TEST(ShmAllreduce, TheSameBitsAsTheScalarKernelOnAwkwardData) {
  same_bits_as_scalar_kernel<float>(DType::kFloat32);
  same_bits_as_scalar_kernel<double>(DType::kFloat64);
  same_bits_as_scalar_kernel<std::int32_t>(DType::kInt32);
  same_bits_as_scalar_kernel<std::int64_t>(DType::kInt64);
  same_bits_as_scalar_kernel<std::uint8_t>(DType::kUInt8);
}

TEST(ShmAllreduceLayout, DirectUpToEightRanksPerNodeBoxesBeyond) {
  for (int p = 1; p <= ShmAllreduce::kDirectMaxRanks; ++p) {
    EXPECT_EQ(ShmAllreduce::layout_for(p), Layout::kDirect) << p << " ranks";
  }
  for (int p : {ShmAllreduce::kDirectMaxRanks + 1, 16, 64, 256, 1024}) {
    EXPECT_EQ(ShmAllreduce::layout_for(p), Layout::kBoxes) << p << " ranks";
  }
  EXPECT_EQ(ShmAllreduce::layout_for(2, Layout::kBoxes), Layout::kBoxes);
  EXPECT_EQ(ShmAllreduce::layout_for(256, Layout::kDirect), Layout::kDirect);
  // What the communicators map (segment_bytes without a layout) is what the ranks then use.
  constexpr std::size_t piece = ShmAllreduce::kPieceBytes;
  EXPECT_EQ(ShmAllreduce::segment_bytes(piece, 8),
            ShmAllreduce::segment_bytes(piece, 8, Layout::kDirect));
  EXPECT_EQ(ShmAllreduce::segment_bytes(piece, 9),
            ShmAllreduce::segment_bytes(piece, 9, Layout::kBoxes));
  EXPECT_EQ(ShmAllreduce::segment_bytes(piece, 256),
            ShmAllreduce::segment_bytes(piece, 256, Layout::kBoxes));
  // The direct segment: a page of counters and the two piece buffers.
  EXPECT_EQ(ShmAllreduce::segment_bytes(piece, 2), 4096 + 2 * piece);
  Segments eight(8);
  Segments nine(9);
  EXPECT_EQ(ShmAllreduce(0, eight.pointers, nullptr).layout(), Layout::kDirect);
  EXPECT_EQ(ShmAllreduce(0, nine.pointers, nullptr).layout(), Layout::kBoxes);
}

TEST(ShmAllreduceLayout, ManyRanksExactAndAlikeAtEitherSideOfTheSwitch) {
  // 8 ranks read each other's buffers, 12 go through the boxes (layout_for); 12 threads on this
  // machine's cores also exercise the waits' yielding.
  const std::size_t counts[] = {5, ShmAllreduce::kPieceBytes / 4 + 1001};
  for (int p : {ShmAllreduce::kDirectMaxRanks, 12}) {
    std::vector<std::vector<float>> bits(static_cast<std::size_t>(p));
    run_ranks(p, [&](int rank, ShmAllreduce& shm) {
      EXPECT_EQ(shm.layout(), ShmAllreduce::layout_for(p));
      for (std::size_t count : counts) {
        std::vector<std::int32_t> x(count);
        for (std::size_t i = 0; i < count; ++i) x[i] = static_cast<std::int32_t>(i % 977) * rank;
        shm.allreduce(x.data(), x.data(), count, DType::kInt32, ReduceOp::kSum);
        const std::int32_t ranks = p * (p - 1) / 2;
        for (std::size_t i = 0; i < count; ++i) {
          ASSERT_EQ(x[i], static_cast<std::int32_t>(i % 977) * ranks)
              << "ranks " << p << ", rank " << rank << ", count " << count << ", element " << i;
        }
      }
      std::mt19937 gen(static_cast<unsigned>(rank) + 7);
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      std::vector<float> f(counts[1]);
      for (float& v : f) v = dist(gen) * 1e3f + dist(gen) * 1e-3f;
      shm.allreduce(f.data(), f.data(), f.size(), DType::kFloat32, ReduceOp::kSum);
      bits[static_cast<std::size_t>(rank)] = std::move(f);
    });
    for (int r = 1; r < p; ++r) {
      ASSERT_EQ(std::memcmp(bits[0].data(), bits[static_cast<std::size_t>(r)].data(),
                            bits[0].size() * sizeof(float)),
                0)
          << "ranks " << p << ": rank " << r << " differs from rank 0";
    }
  }
}

TEST(ShmAllreduceLayout, LargeMessagesAtTwoRanksAlikeInEverySchedule) {
  // From kWholeOneShotBytes on, 2 ranks reduce every piece one-shot (each rank the whole piece):
  // the same bits on both ranks, as the boxes' two-shot gives them and as the scalar kernel does,
  // in place and out of place, as one buffer and as fused parts.
  const std::size_t count = ShmAllreduce::kWholeOneShotBytes / 4 + 12345;
  std::vector<float> want = awkward_values<float>(count, 1);
  const std::vector<float> second = awkward_values<float>(count, 2);
  dtrain::runtime::reduce_to(want.data(), want.data(), second.data(), count, DType::kFloat32,
                             ReduceOp::kSum);
  for (Layout layout : {Layout::kDirect, Layout::kBoxes}) {
    run_ranks(
        2,
        [&](int rank, ShmAllreduce& shm) {
          std::vector<float> data = awkward_values<float>(count, static_cast<unsigned>(rank) + 1);
          std::vector<float> out(count);
          shm.allreduce(data.data(), out.data(), count, DType::kFloat32, ReduceOp::kSum);
          const std::size_t half = count / 2 + 3;
          const dtrain::runtime::AllreducePart parts[] = {
              {data.data(), data.data(), half},
              {data.data() + half, data.data() + half, count - half}};
          shm.allreduce(parts, DType::kFloat32, ReduceOp::kSum);
          for (const std::vector<float>* got : {&out, &data}) {
            for (std::size_t i = 0; i < count; ++i) {
              const bool alike = std::memcmp(&(*got)[i], &want[i], sizeof(float)) == 0 ||
                                 (std::isnan((*got)[i]) && std::isnan(want[i]));
              ASSERT_TRUE(alike) << layout_name(layout) << ", rank " << rank << ", "
                                 << (got == &out ? "one buffer" : "fused parts") << ", element "
                                 << i << ": " << (*got)[i] << " against " << want[i];
            }
          }
        },
        layout);
  }
}

TEST(ShmAllreduceLayout, FusedPartsAcrossShareAndPieceBoundaries) {
  // Parts of every kind of length, some in place and some not, so that pieces hold many slices
  // and shares start and end inside them: each part's result exact at every element.
  const std::size_t lengths[] = {1, 63, 1000, 65537, 3, 70001, 16, 32768, 12345, 7, 99999, 640, 1};
  for (Layout layout : {Layout::kDirect, Layout::kBoxes}) {
    for (int p : {2, 3, 4}) {
      run_ranks(
          p,
          [&](int rank, ShmAllreduce& shm) {
            std::vector<std::vector<std::int64_t>> in;
            std::vector<std::vector<std::int64_t>> out;
            std::vector<dtrain::runtime::AllreducePart> parts;
            for (std::size_t k = 0; k < std::size(lengths); ++k) {
              in.emplace_back(lengths[k]);
              for (std::size_t i = 0; i < lengths[k]; ++i)
                in.back()[i] = static_cast<std::int64_t>(k * 1000 + i % 333) * (rank + 1);
              out.emplace_back(k % 3 == 0 ? 0 : lengths[k]);
            }
            for (std::size_t k = 0; k < std::size(lengths); ++k) {
              void* to = k % 3 == 0 ? static_cast<void*>(in[k].data()) : out[k].data();
              parts.push_back({in[k].data(), to, lengths[k]});
            }
            shm.allreduce(parts, DType::kInt64, ReduceOp::kSum);
            const std::int64_t factor = p * (p + 1) / 2;
            for (std::size_t k = 0; k < std::size(lengths); ++k) {
              const std::vector<std::int64_t>& got = k % 3 == 0 ? in[k] : out[k];
              for (std::size_t i = 0; i < lengths[k]; ++i) {
                ASSERT_EQ(got[i], static_cast<std::int64_t>(k * 1000 + i % 333) * factor)
                    << layout_name(layout) << ", ranks " << p << ", rank " << rank << ", part " << k
                    << ", element " << i;
              }
            }
          },
          layout);
    }
  }
}

TEST(ShmAllreduceLayout, PieceHalvesInEitherLayout) {
  // The hierarchy's halves on one contiguous piece: reduce_scatter_piece leaves each carrier its
  // share of the node's sum in place (fewer shares than ranks too), gather_piece with a shift
  // brings every share to every rank.
  const std::size_t n = ShmAllreduce::kPieceBytes / 4 / 2 + 77;
  for (Layout layout : {Layout::kDirect, Layout::kBoxes}) {
    for (int p : {2, 3, 4}) {
      for (int shares : {0, p - 1}) {
        if (shares == 1 && p == 2) continue;  // one share: nothing to scatter
        run_ranks(
            p,
            [&](int rank, ShmAllreduce& shm) {
              const int cut = shares == 0 ? p : shares;
              std::vector<std::int32_t> data(n);
              for (std::size_t i = 0; i < n; ++i)
                data[i] = static_cast<std::int32_t>(i % 1000) + rank;
              shm.reduce_scatter_piece(data.data(), data.data(), n, DType::kInt32, ReduceOp::kSum,
                                       shares);
              const auto own = ShmAllreduce::share_of(n, 4, rank, cut);
              const std::int32_t ranks = p * (p - 1) / 2;
              for (std::size_t i = own.first; i < own.first + own.count; ++i) {
                ASSERT_EQ(data[i], static_cast<std::int32_t>(i % 1000) * p + ranks)
                    << layout_name(layout) << ", ranks " << p << ", shares " << cut << ", rank "
                    << rank << ", element " << i;
              }
              // Every rank holds share (rank + shift) % p; afterwards all of them.
              const int shift = p - 1;
              std::vector<std::int32_t> gathered(n, -1);
              const auto held = ShmAllreduce::share_of(n, 4, (rank + shift) % p, p);
              for (std::size_t i = held.first; i < held.first + held.count; ++i)
                gathered[i] = static_cast<std::int32_t>(i) * 3;
              shm.gather_piece(gathered.data(), n, DType::kInt32, shift);
              for (std::size_t i = 0; i < n; ++i) {
                ASSERT_EQ(gathered[i], static_cast<std::int32_t>(i) * 3)
                    << layout_name(layout) << ", ranks " << p << ", rank " << rank
                    << ", gathered element " << i;
              }
            },
            layout);
      }
    }
  }
}

TEST(ShmAllreduce, ARankThatNeverArrivesIsNamedAtTheDeadline) {
  Segments segments(3);
  std::vector<std::string> named(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {  // rank 2 never calls
    threads.emplace_back([&, r] {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
      ShmAllreduce* self = nullptr;
      ShmAllreduce shm(r, segments.pointers, [&] {
        if (std::chrono::steady_clock::now() < deadline) return;
        named[static_cast<std::size_t>(r)] = self->missing_ranks();
        throw std::runtime_error("deadline");
      });
      self = &shm;
      std::vector<float> data(100, 1.0f);
      try {
        shm.allreduce(data.data(), data.data(), data.size(), DType::kFloat32, ReduceOp::kSum);
      } catch (const std::runtime_error& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(errors[static_cast<std::size_t>(r)], "deadline") << "rank " << r;
    EXPECT_EQ(named[static_cast<std::size_t>(r)], "2 (not yet in this allreduce)") << "rank " << r;
  }
}

TEST(ShmAllreduce, NothingIsMissingWhenNoCallWaits) {
  run_ranks(2, [](int rank, ShmAllreduce& shm) {
    std::vector<std::int64_t> data(10, rank);
    shm.allreduce(data.data(), data.data(), data.size(), DType::kInt64, ReduceOp::kSum);
    EXPECT_EQ(data, std::vector<std::int64_t>(10, 1));
    EXPECT_EQ(shm.missing_ranks(), "");
  });
}

}  // namespace

namespace {

// Issue 33 item 3: ranks that pass different counts or element types got each other's bytes
// (rank 0's last element 200008.0 with 4097 against 4096). Every rank now fails with the same
// message naming both calls, and the next, matching call is exact: the counters stayed in step.
TEST(ShmAllreduceMismatch, EveryRankNamesTheCallsAndTheNextCallIsExact) {
  struct Case {
    std::size_t count1;  // rank 1's count; the others pass 4096
    DType type1;
    const char* expect;
  };
  const Case cases[] = {
      {4096 + 1, DType::kFloat32,
       "rank 0 passed 4096 float32 elements (sum), rank 1 passed 4097 float32 elements (sum)"},
      {4096, DType::kFloat64,
       "rank 0 passed 4096 float32 elements (sum), rank 1 passed 4096 float64 elements (sum)"},
      {600000, DType::kFloat32,  // several pieces, two-shot: the first piece already differs
       "rank 0 passed 4096 float32 elements (sum), rank 1 passed 600000 float32 elements (sum)"},
  };
  for (const Case& c : cases) {
    for (int p : {2, 3, 4}) {
      const Layout layout = p == 4 ? Layout::kBoxes : Layout::kDirect;
      std::vector<std::string> errors(static_cast<std::size_t>(p));
      run_ranks(
          p,
          [&](int r, ShmAllreduce& shm) {
            const bool odd = r == 1;
            const std::size_t n = odd ? c.count1 : 4096;
            const DType type = odd ? c.type1 : DType::kFloat32;
            std::vector<double> buf(n, 1.0);  // room for either type
            try {
              shm.allreduce(buf.data(), buf.data(), n, type, ReduceOp::kSum);
            } catch (const dtrain::Error& e) {
              EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
              errors[static_cast<std::size_t>(r)] = e.what();
            }
            std::vector<float> next(1000, static_cast<float>(r + 1));
            shm.allreduce(next.data(), next.data(), next.size(), DType::kFloat32, ReduceOp::kSum);
            for (float v : next) ASSERT_EQ(v, static_cast<float>(p * (p + 1) / 2));
          },
          layout);
      for (int r = 0; r < p; ++r) {
        SCOPED_TRACE("rank " + std::to_string(r) + " of " + std::to_string(p));
        EXPECT_NE(errors[static_cast<std::size_t>(r)].find(c.expect), std::string::npos)
            << errors[static_cast<std::size_t>(r)];
      }
    }
  }
}

TEST(ShmAllreduceMismatch, ManyDifferingRanksAreCounted) {
  std::vector<ShmAllreduce::CallSeen> calls;
  const ShmAllreduce::CallWhat sum{ShmAllreduce::CallWhat::Kind::kAllreduce, DType::kFloat32,
                                   ReduceOp::kSum};
  for (int r = 0; r < 10; ++r) calls.push_back({r, r == 0 ? 8u : 9u, sum});
  const std::string text = mismatch_text("ranks of this node", calls);
  EXPECT_NE(text.find("rank 4 passed 9 float32 elements (sum), and 5 more ranks differ"),
            std::string::npos)
      << text;
}

}  // namespace
