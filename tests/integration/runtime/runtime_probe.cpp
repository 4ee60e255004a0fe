// One rank of the runtime integration tests. Prints where init() placed it, one line:
//   rank=R size=S local_rank=L local_size=LS bootstrap=B
// then checks collectives exactly on integer-valued data (nccl-tests' verifiable idea: the result
// is known in closed form and exactly representable, so any difference is a bug, not rounding),
// and exits non-zero naming the first mismatches.
#include <cstdint>
#include <cstdio>
#include <dtrain/dtrain.hpp>
#include <exception>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace {

int failures = 0;
int rank_for_messages = -1;

template <typename T>
void expect_eq(const std::string& what, std::size_t i, T got, T want) {
  if (got == want) return;
  if (failures++ < 10) {
    std::fprintf(stderr, "runtime_probe: rank %d: %s[%zu]: expected %.17g, got %.17g\n",
                 rank_for_messages, what.c_str(), i, static_cast<double>(want),
                 static_cast<double>(got));
  }
}

// Element i of rank r is i*(r+1), and a second buffer holds r+1 everywhere. Over p ranks the sum
// is i*p(p+1)/2, the minimum i, the maximum i*p, the average i*(p+1)/2 and (p+1)/2. With
// i < 2^20 and p <= 8 every value fits float's 24-bit mantissa, so all of them are exact.
template <typename T>
void check_type(dtrain::Comm& comm, int r, int p, std::size_t n) {
  const std::string name =
      std::string(dtrain::to_string(dtrain::dtype_of<T>())) + "(n=" + std::to_string(n) + ")";
  std::vector<T> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<T>(i * static_cast<std::size_t>(r + 1));
  const auto tri = static_cast<std::size_t>(p) * static_cast<std::size_t>(p + 1) / 2;

  std::vector<T> out(n);
  comm.allreduce(std::span<const T>(in), std::span<T>(out), dtrain::ReduceOp::kSum);
  for (std::size_t i = 0; i < n; ++i) expect_eq(name + " sum", i, out[i], static_cast<T>(i * tri));

  comm.allreduce(std::span<const T>(in), std::span<T>(out), dtrain::ReduceOp::kMin);
  for (std::size_t i = 0; i < n; ++i) expect_eq(name + " min", i, out[i], static_cast<T>(i));

  std::vector<T> inplace = in;  // in place: MPI_IN_PLACE under MPI
  comm.allreduce(std::span<T>(inplace), dtrain::ReduceOp::kMax);
  for (std::size_t i = 0; i < n; ++i)
    expect_eq(name + " max in place", i, inplace[i],
              static_cast<T>(i * static_cast<std::size_t>(p)));

  if constexpr (std::is_floating_point_v<T>) {
    comm.allreduce(std::span<const T>(in), std::span<T>(out), dtrain::ReduceOp::kAvg);
    for (std::size_t i = 0; i < n; ++i) {
      expect_eq(name + " avg", i, out[i], static_cast<T>(i) * static_cast<T>(p + 1) / T{2});
    }
    std::vector<T> ones(n, static_cast<T>(r + 1));
    comm.allreduce(std::span<T>(ones), dtrain::ReduceOp::kAvg);
    for (std::size_t i = 0; i < n; ++i)
      expect_eq(name + " avg in place", i, ones[i], static_cast<T>(p + 1) / T{2});
  } else {
    // Not every backend may average integers; all must refuse it the same way.
    bool refused = false;
    try {
      comm.allreduce(std::span<T>(in), dtrain::ReduceOp::kAvg);
    } catch (const dtrain::Error& e) {
      refused = e.code() == dtrain::Error::Code::kInvalid;
    }
    if (!refused && failures++ < 10) {
      std::fprintf(stderr, "runtime_probe: rank %d: %s avg: expected an Error, got none\n",
                   rank_for_messages, name.c_str());
    }
  }
}

}  // namespace

int main() try {
  dtrain::Context ctx = dtrain::init();
  const dtrain::WorldInfo& w = ctx.world();
  rank_for_messages = w.rank;
  std::printf("rank=%d size=%d local_rank=%d local_size=%d bootstrap=%s\n", w.rank, w.size,
              w.local_rank, w.local_size, w.bootstrap.c_str());
  std::fflush(stdout);

  // Several ranks must mean the MPI backend; one rank the copy.
  const std::string_view want_backend = w.size > 1 ? "mpi" : "single";
  if (ctx.comm().backend() != want_backend) {
    std::fprintf(stderr, "runtime_probe: rank %d: backend: expected %s, got %s\n", w.rank,
                 std::string(want_backend).c_str(), std::string(ctx.comm().backend()).c_str());
    ++failures;
  }

  dtrain::Comm& comm = ctx.comm();
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 20}) {
    check_type<float>(comm, w.rank, w.size, n);
    check_type<double>(comm, w.rank, w.size, n);
    check_type<std::int32_t>(comm, w.rank, w.size, n);
    check_type<std::int64_t>(comm, w.rank, w.size, n);
  }

  // Broadcast from the last rank: every rank ends with its values.
  const int root = w.size - 1;
  std::vector<std::int64_t> token(3, w.rank == root ? 4242 + root : -1);
  comm.broadcast(std::span<std::int64_t>(token), root);
  for (std::size_t i = 0; i < token.size(); ++i)
    expect_eq("broadcast", i, token[i], std::int64_t{4242} + root);
  comm.barrier();

  if (failures > 0) {
    std::fprintf(stderr, "runtime_probe: rank %d: %d mismatches\n", w.rank, failures);
    return 1;
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "runtime_probe: rank %d: %s\n", rank_for_messages, e.what());
  return 1;
}
