// One rank of the runtime integration tests. Prints where init() placed it, one line:
//   rank=R size=S local_rank=L local_size=LS bootstrap=B
// then checks collectives exactly on integer-valued data (nccl-tests' verifiable idea: the result
// is known in closed form and exactly representable, so any difference is a bug, not rounding),
// and exits non-zero naming the first mismatches.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dtrain/dtrain.hpp>
#include <exception>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "probe_16bit.hpp"

namespace {

using dtrain::probe::bf16_bits;
using dtrain::probe::bf16_value;
using dtrain::probe::half_any;
using dtrain::probe::half_bits;
using dtrain::probe::half_value;

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

// Element i of rank r is v(i)*(r+1) with v(i) = i mod m, and a second buffer holds r+1 on the
// first 4 ranks and 1 on the others. Over p ranks the sum is v*p(p+1)/2, the minimum v, the
// maximum v*p, the average v*(p+1)/2, the product of the second buffer min(p, 4)!. m keeps every
// value, partial sums included, exactly representable in the type (float16: integers to 2048,
// bfloat16: to 256, uint8: to 255, float32: to 2^24) on up to 4 ranks and shrinks with more (as
// the sums grow), so any difference is a bug.
struct Kind {
  dtrain::DType type;
  std::size_t modulus;  // v(i) = i mod modulus
};

// Elements are stored as their type's bytes; these convert through double.
void put(dtrain::DType t, void* base, std::size_t i, double x) {
  switch (t) {
    case dtrain::DType::kFloat32:
      static_cast<float*>(base)[i] = static_cast<float>(x);
      return;
    case dtrain::DType::kFloat64:
      static_cast<double*>(base)[i] = x;
      return;
    case dtrain::DType::kInt32:
      static_cast<std::int32_t*>(base)[i] = static_cast<std::int32_t>(x);
      return;
    case dtrain::DType::kInt64:
      static_cast<std::int64_t*>(base)[i] = static_cast<std::int64_t>(x);
      return;
    case dtrain::DType::kUInt8:
      static_cast<std::uint8_t*>(base)[i] = static_cast<std::uint8_t>(x);
      return;
    case dtrain::DType::kFloat16:
      static_cast<std::uint16_t*>(base)[i] = half_bits(x);
      return;
    case dtrain::DType::kBFloat16:
      static_cast<std::uint16_t*>(base)[i] = bf16_bits(x);
      return;
  }
}

double get(dtrain::DType t, const void* base, std::size_t i) {
  switch (t) {
    case dtrain::DType::kFloat32:
      return static_cast<const float*>(base)[i];
    case dtrain::DType::kFloat64:
      return static_cast<const double*>(base)[i];
    case dtrain::DType::kInt32:
      return static_cast<const std::int32_t*>(base)[i];
    case dtrain::DType::kInt64:
      return static_cast<double>(static_cast<const std::int64_t*>(base)[i]);
    case dtrain::DType::kUInt8:
      return static_cast<const std::uint8_t*>(base)[i];
    case dtrain::DType::kFloat16:
      return half_value(static_cast<const std::uint16_t*>(base)[i]);
    case dtrain::DType::kBFloat16:
      return bf16_value(static_cast<const std::uint16_t*>(base)[i]);
  }
  return -1;
}

bool floating(dtrain::DType t) {
  return t == dtrain::DType::kFloat32 || t == dtrain::DType::kFloat64 ||
         t == dtrain::DType::kFloat16 || t == dtrain::DType::kBFloat16;
}

using Bytes = std::vector<unsigned char>;

Bytes filled(const Kind& k, std::size_t n, auto value) {
  Bytes b(n * dtrain::dtype_size(k.type));
  for (std::size_t i = 0; i < n; ++i) put(k.type, b.data(), i, value(i));
  return b;
}

void expect_all(const Kind& k, const std::string& what, const Bytes& got, std::size_t n,
                auto want) {
  for (std::size_t i = 0; i < n; ++i) expect_eq(what, i, get(k.type, got.data(), i), want(i));
}

void check_kind(dtrain::Comm& comm, const Kind& k, int r, int p, std::size_t n) {
  using Op = dtrain::ReduceOp;
  const std::string name = std::string(dtrain::to_string(k.type)) + "(n=" + std::to_string(n) + ")";
  // The sums grow with p (p + 1) / 2: past 4 ranks m shrinks by as much.
  const std::size_t modulus =
      p <= 4 ? k.modulus
             : std::max<std::size_t>(2, k.modulus * 20 / static_cast<std::size_t>(p * (p + 1)));
  const auto v = [&](std::size_t i) { return static_cast<double>(i % modulus); };
  const double tri = p * (p + 1) / 2.0;
  const Bytes in = filled(k, n, [&](std::size_t i) { return v(i) * (r + 1); });
  Bytes out(in.size());

  comm.allreduce(in.data(), out.data(), n, k.type, Op::kSum);
  expect_all(k, name + " sum", out, n, [&](std::size_t i) { return v(i) * tri; });
  comm.allreduce(in.data(), out.data(), n, k.type, Op::kMin);
  expect_all(k, name + " min", out, n, v);
  Bytes inplace = in;
  comm.allreduce(inplace.data(), inplace.data(), n, k.type, Op::kMax);
  expect_all(k, name + " max in place", inplace, n, [&](std::size_t i) { return v(i) * p; });
  double fact = 1;
  for (int q = 2; q <= std::min(p, 4); ++q) fact *= q;
  Bytes ranks = filled(k, n, [&](std::size_t) { return r < 4 ? r + 1.0 : 1.0; });
  comm.allreduce(ranks.data(), ranks.data(), n, k.type, Op::kProduct);
  expect_all(k, name + " product in place", ranks, n, [&](std::size_t) { return fact; });

  if (floating(k.type)) {
    comm.allreduce(in.data(), out.data(), n, k.type, Op::kAvg);
    expect_all(k, name + " avg", out, n, [&](std::size_t i) { return v(i) * (p + 1) / 2.0; });
  } else {
    // Not every backend may average integers; all must refuse it the same way.
    bool refused = false;
    try {
      comm.allreduce(out.data(), out.data(), n, k.type, Op::kAvg);
    } catch (const dtrain::Error& e) {
      refused = e.code() == dtrain::Error::Code::kInvalid;
    }
    if (!refused && failures++ < 10) {
      std::fprintf(stderr, "runtime_probe: rank %d: %s avg: expected an Error, got none\n",
                   rank_for_messages, name.c_str());
    }
  }

  // Allgather: block q holds rank q's v(i)*(q+1); in place from this rank's block as well.
  Bytes gathered(in.size() * static_cast<std::size_t>(p));
  comm.allgather(in.data(), gathered.data(), n, k.type);
  const auto gathered_want = [&](std::size_t j) {
    return v(j % n) * static_cast<double>(j / n + 1);
  };
  expect_all(k, name + " allgather", gathered, n * static_cast<std::size_t>(p), gathered_want);
  Bytes gathered2(gathered.size());
  std::memcpy(gathered2.data() + in.size() * static_cast<std::size_t>(r), in.data(), in.size());
  comm.allgather(gathered2.data() + in.size() * static_cast<std::size_t>(r), gathered2.data(), n,
                 k.type);
  expect_all(k, name + " allgather in place", gathered2, n * static_cast<std::size_t>(p),
             gathered_want);

  // Reduce-scatter of p blocks of the input: this rank's block is v(i)*tri over its indices.
  const Bytes long_in =
      filled(k, n * static_cast<std::size_t>(p), [&](std::size_t j) { return v(j) * (r + 1); });
  Bytes block(in.size());
  comm.reduce_scatter(long_in.data(), block.data(), n, k.type, Op::kSum);
  expect_all(k, name + " reduce_scatter", block, n,
             [&](std::size_t i) { return v(static_cast<std::size_t>(r) * n + i) * tri; });
  Bytes rs_inplace = long_in;
  comm.reduce_scatter(rs_inplace.data(), rs_inplace.data(), n, k.type, Op::kMax);
  expect_all(k, name + " reduce_scatter max in place", rs_inplace, n,
             [&](std::size_t i) { return v(static_cast<std::size_t>(r) * n + i) * p; });

  // Two asynchronous allreduces in flight, waited in reverse order.
  Bytes a1(in.size());
  Bytes a2(in.size());
  dtrain::Work w1 = comm.allreduce_async(in.data(), a1.data(), n, k.type, Op::kSum);
  dtrain::Work w2 = comm.allreduce_async(in.data(), a2.data(), n, k.type, Op::kMin);
  // A blocking allreduce while they may still be queued: it must not run inline on this thread
  // beside them (MPI serializes calls, and ranks must match collectives in order).
  Bytes a3(in.size());
  comm.allreduce(in.data(), a3.data(), n, k.type, Op::kMax);
  w2.wait();
  w1.wait();
  expect_all(k, name + " async sum", a1, n, [&](std::size_t i) { return v(i) * tri; });
  expect_all(k, name + " async min", a2, n, v);
  expect_all(k, name + " max beside async", a3, n, [&](std::size_t i) { return v(i) * p; });

  // Broadcast from the last rank: every rank ends with its values.
  const int root = p - 1;
  Bytes b = filled(k, n, [&](std::size_t i) { return r == root ? v(i) + 1 : 0.0; });
  comm.broadcast(b.data(), n, k.type, root);
  expect_all(k, name + " broadcast", b, n, [&](std::size_t i) { return v(i) + 1; });
}

// uint8 arithmetic wraps modulo 256 whatever the size, backend or launcher (docs/runtime-api.md):
// 200 on every rank sums to 200 * p mod 256 (144 on 2 ranks, 88 on 3), and 7s multiply to
// 7^p mod 256. Open MPI 4.1's AVX reduction saturated 8-bit sums at 255 (open-mpi/ompi#8045) on
// MPI's own path only, so the sizes straddle where the path changes: 4 KiB (across nodes: flat or
// hierarchical), 64 KiB (point to point or MPI_Allreduce), 1 MiB (pieces); reduce_scatter always
// went to MPI.
void check_uint8_wraps(dtrain::Comm& comm, int p) {
  using Op = dtrain::ReduceOp;
  const auto u8 = dtrain::DType::kUInt8;
  int sum = 0;
  int product = 1;
  for (int q = 0; q < p; ++q) {
    sum = (sum + 200) % 256;
    product = product * 7 % 256;
  }
  for (std::size_t n :
       {std::size_t{1}, std::size_t{1000}, std::size_t{4096}, std::size_t{4097}, std::size_t{65535},
        std::size_t{65536}, std::size_t{65537}, std::size_t{1} << 20, (std::size_t{1} << 20) + 1}) {
    const std::string size = "(n=" + std::to_string(n) + ")";
    const std::vector<std::uint8_t> in(n, 200);
    std::vector<std::uint8_t> out(n);
    comm.allreduce(in.data(), out.data(), n, u8, Op::kSum);
    for (std::size_t i = 0; i < n; ++i) expect_eq("uint8 wrap sum" + size, i, +out[i], sum);
    std::vector<std::uint8_t> inplace(n, 200);
    comm.allreduce(inplace.data(), inplace.data(), n, u8, Op::kSum);
    for (std::size_t i = 0; i < n; ++i)
      expect_eq("uint8 wrap sum in place" + size, i, +inplace[i], sum);
    std::vector<std::uint8_t> sevens(n, 7);
    comm.allreduce(sevens.data(), sevens.data(), n, u8, Op::kProduct);
    for (std::size_t i = 0; i < n; ++i)
      expect_eq("uint8 wrap product" + size, i, +sevens[i], product);
    if (n > 65537) continue;  // reduce_scatter's input is p times larger
    const std::vector<std::uint8_t> all(n * static_cast<std::size_t>(p), 200);
    std::vector<std::uint8_t> block(n);
    comm.reduce_scatter(all.data(), block.data(), n, u8, Op::kSum);
    for (std::size_t i = 0; i < n; ++i)
      expect_eq("uint8 wrap reduce_scatter" + size, i, +block[i], sum);
    std::vector<std::uint8_t> rs_inplace = all;
    comm.reduce_scatter(rs_inplace.data(), rs_inplace.data(), n, u8, Op::kSum);
    for (std::size_t i = 0; i < n; ++i)
      expect_eq("uint8 wrap reduce_scatter in place" + size, i, +rs_inplace[i], sum);
  }
}

// Issue 22, item 8: what docs/runtime-api.md ("float16 and bfloat16 sums") promises, on whichever
// backend runs the probe, at sizes on each side of MPI's path changes (64 KiB, 1 MiB, widened to
// float): every rank gets the same bits, the error is within p - 1 roundings of the exact sum, and
// MPI, which sums in float32 and rounds once, within one rounding (plus float32's error).
void check_16bit_sums(dtrain::Comm& comm, int rank, int p) {
  // Mixed signs, exponents over 14 binades (float16 2^-5..2^9, bfloat16 likewise), and mantissas
  // that rarely add exactly.
  const auto input = [](bool half, int r, std::size_t i) -> std::uint16_t {
    const auto k = static_cast<unsigned>(i * 7919 + static_cast<std::size_t>(r) * 104729);
    const unsigned sign = (k % 3 == 0) ? 0x8000u : 0u;
    const unsigned binade = k / 3 % 14;
    return static_cast<std::uint16_t>(half ? sign | ((10 + binade) << 10) | (k % 1021)
                                           : sign | ((122 + binade) << 7) | (k % 127));
  };
  for (bool half : {true, false}) {
    const auto value = [half](std::uint16_t v) { return half ? half_any(v) : bf16_value(v); };
    const auto type = half ? dtrain::DType::kFloat16 : dtrain::DType::kBFloat16;
    const double u = half ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
    for (std::size_t n : {std::size_t{1000}, std::size_t{40000}, std::size_t{300000}}) {
      const std::string what = std::string(half ? "float16" : "bfloat16") +
                               " sum (n=" + std::to_string(n) + ", " + std::string(comm.backend()) +
                               ")";
      std::vector<std::uint16_t> in(n);
      for (std::size_t i = 0; i < n; ++i) in[i] = input(half, rank, i);
      std::vector<std::uint16_t> out(n);
      comm.allreduce(in.data(), out.data(), n, type, dtrain::ReduceOp::kSum);
      std::vector<std::uint16_t> all(n * static_cast<std::size_t>(p));
      comm.allgather(out.data(), all.data(), n, type);
      for (int q = 0; q < p; ++q) {
        for (std::size_t i = 0; i < n; ++i) {
          expect_eq(what + ": bits on rank " + std::to_string(q), i,
                    +all[static_cast<std::size_t>(q) * n + i], +out[i]);
        }
      }
      const double gamma = (p - 1) * u / (1 - (p - 1) * u);
      for (std::size_t i = 0; i < n; ++i) {
        double exact = 0;
        double magnitude = 0;
        for (int q = 0; q < p; ++q) {
          exact += value(input(half, q, i));
          magnitude += std::fabs(value(input(half, q, i)));
        }
        const double error = std::fabs(value(out[i]) - exact);
        const double bound = comm.backend() == "mpi"
                                 ? u * std::fabs(exact) + p * std::ldexp(1.0, -24) * magnitude
                                 : gamma * magnitude;
        if (error > bound && failures++ < 10) {
          std::fprintf(stderr,
                       "runtime_probe: rank %d: %s[%zu]: exact %.17g, got %.17g: error %.3g over "
                       "the documented bound %.3g\n",
                       rank, what.c_str(), i, exact, value(out[i]), error, bound);
        }
      }
    }
  }
}

const Kind kKinds[] = {
    {dtrain::DType::kFloat32, std::size_t{1} << 20},
    {dtrain::DType::kFloat64, std::size_t{1} << 20},
    {dtrain::DType::kInt32, std::size_t{1} << 20},
    {dtrain::DType::kInt64, std::size_t{1} << 20},
    {dtrain::DType::kUInt8, 8},
    {dtrain::DType::kFloat16, 64},
    {dtrain::DType::kBFloat16, 16},
};

}  // namespace

int main() try {
  dtrain::Context ctx = dtrain::init();
  const dtrain::WorldInfo& w = ctx.world();
  rank_for_messages = w.rank;
  std::printf("rank=%d size=%d local_rank=%d local_size=%d bootstrap=%s\n", w.rank, w.size,
              w.local_rank, w.local_size, w.bootstrap.c_str());
  // Where the rank runs and how its allreduces travel, for the multi-node tests.
  std::printf("placement: rank=%d node_id=%d host=%s allreduce=%s\n", w.rank, w.node_id,
              w.hostname.c_str(), std::string(ctx.comm().allreduce_transport()).c_str());
  std::fflush(stdout);

  // Several ranks mean libdtrain's sockets, unless MPI is asked for (DTRAIN_TRANSPORT=mpi) or
  // found the job (the MPI bootstrap); one rank the copy.
  const char* transport = std::getenv("DTRAIN_TRANSPORT");
  const bool mpi =
      w.bootstrap == "mpi" || (transport != nullptr && std::string(transport) == "mpi");
  const std::string_view want_backend = w.size == 1 ? "single" : mpi ? "mpi" : "tcp";
  if (ctx.comm().backend() != want_backend) {
    std::fprintf(stderr, "runtime_probe: rank %d: backend: expected %s, got %s\n", w.rank,
                 std::string(want_backend).c_str(), std::string(ctx.comm().backend()).c_str());
    ++failures;
  }

  dtrain::Comm& comm = ctx.comm();

  // RUNTIME_PROBE_STEPS=N: a training loop of N steps, each RUNTIME_PROBE_STEP_MS of "compute"
  // (a sleep) and a 4 KiB allreduce; RUNTIME_PROBE_SLOW_RANK=k sleeps 1.25x as long, as a slow rank
  // does (the straggler watch names it). Rank 0 prints "runtime_probe: step N" every 10 steps.
  if (const char* steps_text = std::getenv("RUNTIME_PROBE_STEPS")) {
    const int steps = std::atoi(steps_text);
    const char* ms_text = std::getenv("RUNTIME_PROBE_STEP_MS");
    const char* slow_text = std::getenv("RUNTIME_PROBE_SLOW_RANK");
    double ms = ms_text != nullptr ? std::atof(ms_text) : 20.0;
    if (slow_text != nullptr && std::atoi(slow_text) == w.rank) ms *= 1.25;
    std::vector<float> x(1024, 1.0f);
    // RUNTIME_PROBE_DIE_STEP=n with RUNTIME_PROBE_DIE_RANK=k: rank k stops (SIGNAL=STOP) or spins
    // (SIGNAL=SPIN) before step n's allreduce, mid-training, saying so first (its log's timestamp
    // is when the hang began: the hang watch's benchmark measures from it).
    const char* die_step_text = std::getenv("RUNTIME_PROBE_DIE_STEP");
    const char* die_rank_text = std::getenv("RUNTIME_PROBE_DIE_RANK");
    const int die_step =
        die_step_text != nullptr && die_rank_text != nullptr && std::atoi(die_rank_text) == w.rank
            ? std::atoi(die_step_text)
            : 0;
    const char* die_signal = std::getenv("RUNTIME_PROBE_SIGNAL");
    const bool spin = die_signal != nullptr && std::string(die_signal) == "SPIN";
    const auto began = std::chrono::steady_clock::now();
    for (int step = 1; step <= steps; ++step) {
      std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(ms * 1000)));
      if (step == die_step) {
        std::printf("runtime_probe: rank %d %s at step %d\n", w.rank, spin ? "spins" : "stops",
                    step);
        std::fflush(stdout);
        volatile std::uint64_t spins = 0;
        while (spin) spins = spins + 1;
        std::raise(SIGSTOP);
      }
      comm.allreduce(std::span<float>(x), dtrain::ReduceOp::kMax);
      if (w.rank == 0 && step % 10 == 0) {
        std::printf("runtime_probe: step %d\n", step);
        std::fflush(stdout);
      }
    }
    if (w.rank == 0) {
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - began;
      std::printf("runtime_probe: %d steps in %.6f s\n", steps, took.count());
    }
    return 0;
  }
  // RUNTIME_PROBE_DIE_RANK=k: rank k kills itself (SIGKILL: no cleanup, sockets closed by the
  // kernel; or SIGSTOP with RUNTIME_PROBE_SIGNAL=STOP: alive but silent, as a hung rank; or a busy
  // loop with RUNTIME_PROBE_SIGNAL=SPIN) and the
  // others keep calling allreduce; they must fail with the collective's error, which main's
  // handler prints, never hang.
  if (const char* die = std::getenv("RUNTIME_PROBE_DIE_RANK")) {
    comm.barrier();
    const char* sig = std::getenv("RUNTIME_PROBE_SIGNAL");
    // SPIN: the rank computes forever outside any collective (a busy loop), as a rank stuck in
    // its own code would (the hang watch names it "running").
    if (w.rank == std::atoi(die) && sig && std::string(sig) == "SPIN") {
      volatile std::uint64_t spins = 0;
      for (;;) spins = spins + 1;
    }
    if (w.rank == std::atoi(die)) std::raise(sig && std::string(sig) == "STOP" ? SIGSTOP : SIGKILL);
    // RUNTIME_PROBE_FAIL_FAST=1: as a training loop does, 1 MiB allreduces and exit at the
    // first error; else 4 KiB ones and a pause before exiting (below).
    const bool fail_fast = std::getenv("RUNTIME_PROBE_FAIL_FAST") != nullptr;
    std::vector<float> x(fail_fast ? 262144 : 1024, 1.0f);
    try {
      for (int i = 0; i < 1000000; ++i) comm.allreduce(std::span<float>(x), dtrain::ReduceOp::kSum);
    } catch (const std::exception& e) {
      // Report, then stay a moment before failing: mpirun ends the whole job as soon as one
      // survivor exits non-zero, and a survivor that noticed the loss 100 ms later than another
      // would be killed before its own report (1 run in 10-15 of runtime_mpirun_killed_rank_*
      // on 2 vCPUs). The tests check every survivor's report.
      std::fprintf(stderr, "runtime_probe: rank %d: %s\n", w.rank, e.what());
      if (!fail_fast) std::this_thread::sleep_for(std::chrono::seconds(2));
      return 1;
    }
    std::fprintf(stderr, "runtime_probe: rank %d: expected a failure after rank %s died\n", w.rank,
                 die);
    return 1;
  }
  // 1000 elements: dtrain's point-to-point allreduce; 30 K: MPI_Allreduce for all but 1-byte
  // types on 3 and 4 ranks (2 ranks exchange point to point at every size); 600 K: several 1 MiB
  // pieces, the last one partial.
  for (std::size_t n :
       {std::size_t{1}, std::size_t{1000}, std::size_t{30000}, std::size_t{600000}}) {
    for (const Kind& k : kKinds) check_kind(comm, k, w.rank, w.size, n);
  }
  check_uint8_wraps(comm, w.size);
  check_16bit_sums(comm, w.rank, w.size);
  // Messages of 20 MB: a round of the piece-size trials (6 calls of one size of at least 16 MiB,
  // each cut in 1, 4 or 16 MiB pieces), the ranks' agreement on the fastest, and calls that use
  // it; every call checked exactly.
  {
    const double tri = w.size * (w.size + 1) / 2.0;
    std::vector<float> big(5'000'000);
    for (int call = 0; call < 8; ++call) {
      for (std::size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<float>((i % 1000) * static_cast<std::size_t>(w.rank + 1));
      comm.allreduce(std::span<float>(big), dtrain::ReduceOp::kSum);
      for (std::size_t i = 0; i < big.size(); ++i)
        expect_eq("20 MB allreduce " + std::to_string(call), i, static_cast<double>(big[i]),
                  static_cast<double>(i % 1000) * tri);
    }
  }
  // The bootstrap store: every rank publishes a value, then reads every rank's.
  ctx.store_set("probe/" + std::to_string(w.rank), "hello from " + std::to_string(w.rank));
  for (int q = 0; q < w.size; ++q) {
    const std::string got = ctx.store_get("probe/" + std::to_string(q));
    if (got != "hello from " + std::to_string(q) && failures++ < 10) {
      std::fprintf(
          stderr,
          "runtime_probe: rank %d: store_get(probe/%d): expected \"hello from %d\", got \"%s\"\n",
          w.rank, q, q, got.c_str());
    }
  }

  // Fused allreduce: many small tensors in 16 KiB buckets plus ones large enough to go direct.
  {
    std::vector<std::vector<float>> grads;
    for (std::size_t n : {std::size_t{1}, std::size_t{100}, std::size_t{3000}, std::size_t{300000},
                          std::size_t{17}, std::size_t{5000}, std::size_t{4096}, std::size_t{2}}) {
      for (int copy = 0; copy < 3; ++copy) grads.emplace_back(n);
    }
    std::vector<dtrain::FusedAllreduce::Tensor> tensors;
    for (auto& g : grads) tensors.push_back({g.data(), g.size()});
    dtrain::FusedAllreduce fused(comm, tensors, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum,
                                 16 * 1024);
    const double tri = w.size * (w.size + 1) / 2.0;
    for (int round = 0; round < 2; ++round) {  // buffers are reused: run twice
      for (auto& g : grads)
        for (std::size_t i = 0; i < g.size(); ++i)
          g[i] = static_cast<float>((i % 1000) * static_cast<std::size_t>(w.rank + 1));
      fused.run();
      for (std::size_t t = 0; t < grads.size(); ++t)
        for (std::size_t i = 0; i < grads[t].size(); ++i)
          expect_eq("fused tensor " + std::to_string(t), i, static_cast<double>(grads[t][i]),
                    static_cast<double>(i % 1000) * tri);
    }
  }
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
