// One rank of the runtime integration tests: prints where init() placed it, then checks every
// allreduce exactly on integer-valued data (nccl-tests' verifiable idea: the expected sum is
// known in closed form) and exits non-zero naming the first mismatch.
#include <cstdint>
#include <cstdio>
#include <dtrain/dtrain.hpp>
#include <exception>
#include <string>
#include <vector>

namespace {

int failures = 0;

template <typename T>
void expect_eq(const char* what, std::size_t i, T got, T want) {
  if (got != want && failures++ < 10) {
    std::fprintf(stderr, "probe: %s[%zu]: expected %.17g, got %.17g\n", what, i,
                 static_cast<double>(want), static_cast<double>(got));
  }
}

template <typename T>
void check_sum_and_avg(dtrain::Context& ctx, const char* name, std::size_t n) {
  const int r = ctx.world().rank;
  const int p = ctx.world().size;
  // Rank r contributes (i % 97 + 1) * (r + 1): the sum over ranks is (i % 97 + 1) * p(p+1)/2.
  std::vector<T> in(n), out(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<T>((i % 97 + 1) * (r + 1));
  ctx.comm().allreduce(std::span<const T>(in), std::span<T>(out), dtrain::ReduceOp::kSum);
  const long long tri = static_cast<long long>(p) * (p + 1) / 2;
  for (std::size_t i = 0; i < n; ++i)
    expect_eq(name, i, out[i], static_cast<T>((i % 97 + 1) * tri));
  // In place, max: every element becomes the last rank's value.
  ctx.comm().allreduce(std::span<T>(in), dtrain::ReduceOp::kMax);
  for (std::size_t i = 0; i < n; ++i) expect_eq(name, i, in[i], static_cast<T>((i % 97 + 1) * p));
  if constexpr (std::is_floating_point_v<T>) {
    // Average of r+1 over ranks is (p+1)/2: exact in binary floating point for these sizes.
    std::vector<T> v(n, static_cast<T>(r + 1));
    ctx.comm().allreduce(std::span<T>(v), dtrain::ReduceOp::kAvg);
    for (std::size_t i = 0; i < n; ++i) expect_eq(name, i, v[i], static_cast<T>(p + 1) / 2);
  }
}

}  // namespace

int main() try {
  dtrain::Context ctx = dtrain::init();
  const auto& w = ctx.world();
  std::printf("rank=%d size=%d local_rank=%d local_size=%d bootstrap=%s backend=%s\n", w.rank,
              w.size, w.local_rank, w.local_size, w.bootstrap.c_str(),
              ctx.comm().backend().c_str());
  std::fflush(stdout);
  for (std::size_t n : {1u, 1000u, 1u << 20}) {
    check_sum_and_avg<float>(ctx, "float32", n);
    check_sum_and_avg<double>(ctx, "float64", n);
    check_sum_and_avg<std::int32_t>(ctx, "int32", n);
    check_sum_and_avg<std::int64_t>(ctx, "int64", n);
  }
  std::vector<std::int64_t> token = {w.rank == 0 ? 424242 : 0};
  ctx.comm().broadcast(std::span<std::int64_t>(token), 0);
  expect_eq("broadcast", 0, token[0], std::int64_t{424242});
  ctx.comm().barrier();
  if (failures > 0) {
    std::fprintf(stderr, "probe: rank %d: %d mismatches\n", w.rank, failures);
    return 1;
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "probe: %s\n", e.what());
  return 1;
}
