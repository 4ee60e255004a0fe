// ShmAllreduce with threads as ranks over segments in this process's memory: every op and dtype
// exact on integer-valued data (one-shot, two-shot, several pieces, odd counts, in and out of
// place), identical bits on every rank, and a rank that never arrives named at the deadline.
#include "comm/transport/shm/shm_allreduce.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/algorithms/half.hpp"

namespace {

using dtrain::DType;
using dtrain::ReduceOp;
using dtrain::runtime::ShmAllreduce;

// One process's stand-in for the shared window: p prepared, 64-byte aligned segments.
struct Segments {
  explicit Segments(int p)
      : stride((ShmAllreduce::segment_bytes(ShmAllreduce::kPieceBytes, p) + 63) / 64 * 64),
        memory(new std::uint64_t[stride * static_cast<std::size_t>(p) / 8 + 8]()) {
    char* base = reinterpret_cast<char*>(memory.get());
    base += (64 - reinterpret_cast<std::uintptr_t>(base) % 64) % 64;
    for (int r = 0; r < p; ++r) {
      pointers.push_back(base + stride * static_cast<std::size_t>(r));
      ShmAllreduce::init_segment(pointers.back());
    }
  }
  std::size_t stride;
  std::unique_ptr<std::uint64_t[]> memory;
  std::vector<char*> pointers;
};

// Runs body(rank, allreduce) on p threads; rethrows the first failure on this thread.
template <typename Body>
void run_ranks(int p, Body body) {
  Segments segments(p);
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      try {
        ShmAllreduce shm(r, segments.pointers, nullptr);
        body(r, shm);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

void encode(DType type, double v, char* out) {
  switch (type) {
    case DType::kFloat32: {
      const float f = static_cast<float>(v);
      std::memcpy(out, &f, 4);
      return;
    }
    case DType::kFloat64:
      std::memcpy(out, &v, 8);
      return;
    case DType::kInt32: {
      const auto x = static_cast<std::int32_t>(v);
      std::memcpy(out, &x, 4);
      return;
    }
    case DType::kInt64: {
      const auto x = static_cast<std::int64_t>(v);
      std::memcpy(out, &x, 8);
      return;
    }
    case DType::kUInt8:
      *reinterpret_cast<std::uint8_t*>(out) = static_cast<std::uint8_t>(v);
      return;
    case DType::kFloat16:
    case DType::kBFloat16: {
      const float f = static_cast<float>(v);
      const std::uint16_t h = type == DType::kFloat16 ? dtrain::runtime::float_to_half(f)
                                                      : dtrain::runtime::float_to_bfloat16(f);
      std::memcpy(out, &h, 2);
      return;
    }
  }
}

// Small integers every type holds exactly, whatever the op combines: products stay within 2^p.
double value(ReduceOp op, DType type, int rank, std::size_t i) {
  if (op == ReduceOp::kProduct) return 1.0 + static_cast<double>((i + rank) % 2);
  if (type == DType::kUInt8) return static_cast<double>((i * 7 + rank * 3) % 50);
  return static_cast<double>((i * 7 + rank * 3) % 23) - 11.0;
}

double combine(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::kMin:
      return std::min(a, b);
    case ReduceOp::kMax:
      return std::max(a, b);
    case ReduceOp::kProduct:
      return a * b;
    default:
      return a + b;
  }
}

TEST(ShmAllreduce, EveryOpAndTypeExactOnIntegerValuedData) {
  const DType types[] = {DType::kFloat32, DType::kFloat64, DType::kInt32,   DType::kInt64,
                         DType::kUInt8,   DType::kFloat16, DType::kBFloat16};
  const ReduceOp ops[] = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct};
  // One element; one-shot; just over the one-shot size for float32; several pieces, odd counts.
  const std::size_t counts[] = {1, 1000, ShmAllreduce::kOneShotBytes / 4 + 3,
                                ShmAllreduce::kPieceBytes / 8 * 5 + 13};
  for (int p : {2, 3, 4}) {
    run_ranks(p, [&](int rank, ShmAllreduce& shm) {
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
                  << "ranks " << p << ", rank " << rank << ", dtype " << dtrain::to_string(type)
                  << ", op " << static_cast<int>(op) << ", count " << count << ", element " << i;
            }
          }
        }
      }
    });
  }
}

TEST(ShmAllreduce, EveryRankGetsTheSameBits) {
  // Rounding depends on the order of the operands; every rank must combine them in the same one.
  const std::size_t count = ShmAllreduce::kPieceBytes / 4 * 2 + 777;
  for (int p : {2, 3, 4}) {
    std::vector<std::vector<float>> results(static_cast<std::size_t>(p));
    run_ranks(p, [&](int rank, ShmAllreduce& shm) {
      std::mt19937 gen(static_cast<unsigned>(rank) + 1);
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      std::vector<float> data(count);
      for (float& x : data) x = dist(gen) * 1e-3f + dist(gen);
      shm.allreduce(data.data(), data.data(), count, DType::kFloat32, ReduceOp::kSum);
      results[static_cast<std::size_t>(rank)] = std::move(data);
    });
    for (int r = 1; r < p; ++r) {
      ASSERT_EQ(std::memcmp(results[0].data(), results[static_cast<std::size_t>(r)].data(),
                            count * sizeof(float)),
                0)
          << "ranks " << p << ": rank " << r << " differs from rank 0";
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
       "rank 0 passed 4096 float32 elements (kSum), rank 1 passed 4097 float32 elements (kSum)"},
      {4096, DType::kFloat64,
       "rank 0 passed 4096 float32 elements (kSum), rank 1 passed 4096 float64 elements (kSum)"},
      {600000, DType::kFloat32,  // several pieces, two-shot: the first piece already differs
       "rank 0 passed 4096 float32 elements (kSum), rank 1 passed 600000 float32 elements (kSum)"},
  };
  for (const Case& c : cases) {
    for (int p : {2, 3}) {
      std::vector<std::string> errors(static_cast<std::size_t>(p));
      run_ranks(p, [&](int r, ShmAllreduce& shm) {
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
      });
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
  EXPECT_NE(text.find("rank 4 passed 9 float32 elements (kSum), and 5 more ranks differ"),
            std::string::npos)
      << text;
}

}  // namespace
