// Threads as the ranks of one node for ShmAllreduce's tests (shm_allreduce_test.cpp): segments in
// this process's memory in either layout, run_ranks, and data every type holds exactly.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <random>
#include <thread>
#include <type_traits>
#include <vector>

#include "comm/algorithms/half.hpp"
#include "comm/transport/shm/shm_allreduce.hpp"

namespace shm_test {

using dtrain::DType;
using dtrain::ReduceOp;
using dtrain::runtime::ShmAllreduce;
using Layout = ShmAllreduce::Layout;

// One process's stand-in for the shared window: p prepared, 64-byte aligned segments.
struct Segments {
  explicit Segments(int p, Layout layout = Layout::kAuto)
      : stride((ShmAllreduce::segment_bytes(ShmAllreduce::kPieceBytes, p, layout) + 63) / 64 * 64),
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
void run_ranks(int p, Body body, Layout layout = Layout::kAuto) {
  Segments segments(p, layout);
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      try {
        ShmAllreduce shm(r, segments.pointers, nullptr, ShmAllreduce::kPieceBytes, layout);
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

inline void encode(DType type, double v, char* out) {
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
inline double value(ReduceOp op, DType type, int rank, std::size_t i) {
  if (op == ReduceOp::kProduct) return 1.0 + static_cast<double>((i + rank) % 2);
  if (type == DType::kUInt8) return static_cast<double>((i * 7 + rank * 3) % 50);
  return static_cast<double>((i * 7 + rank * 3) % 23) - 11.0;
}

inline double combine(ReduceOp op, double a, double b) {
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

inline const char* layout_name(Layout layout) {
  return layout == Layout::kDirect ? "direct" : layout == Layout::kBoxes ? "boxes" : "auto";
}

// Random values of T, with NaNs, infinities, signed zeros and subnormals among the floating ones.
template <typename T>
std::vector<T> awkward_values(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> real(-100.0, 100.0);
  std::uniform_int_distribution<int> pick(0, 15);
  std::vector<T> v(n);
  for (T& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      switch (pick(gen)) {
        case 0:
          x = std::numeric_limits<T>::quiet_NaN();
          break;
        case 1:
          x = static_cast<T>(-0.0);
          break;
        case 2:
          x = static_cast<T>(0.0);
          break;
        case 3:
          x = std::numeric_limits<T>::infinity() * (real(gen) < 0 ? -1 : 1);
          break;
        case 4:
          x = std::numeric_limits<T>::denorm_min() * static_cast<T>(pick(gen) + 1);
          break;
        default:
          x = static_cast<T>(real(gen));
      }
    } else {
      x = static_cast<T>(gen());  // wraps, as the integer kernels do
    }
  }
  return v;
}

}  // namespace shm_test
