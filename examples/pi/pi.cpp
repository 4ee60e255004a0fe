// Monte-Carlo estimate of pi with libdtrain: the classic first MPI program. Each rank draws its
// share of the samples with its own random stream, one allreduce sums the hits, and a Meter
// records every step's samples and seconds so `dtrain stats` can show the throughput.
#include <dtrain/dtrain.hpp>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <numbers>
#include <span>
#include <string>
#include <string_view>

namespace {

// splitmix64 to seed, xoshiro256+ to draw: fast, small, and identical on every platform.
struct Xoshiro256Plus {
  std::uint64_t s[4];
  explicit Xoshiro256Plus(std::uint64_t seed) {
    for (auto& word : s) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word = z ^ (z >> 31);
    }
  }
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t next() {
    const std::uint64_t result = s[0] + s[3];
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

struct Options {
  std::int64_t samples = 100'000'000;  // in total, over all ranks
  std::int64_t steps = 20;
  std::uint64_t seed = 2026;
};

std::int64_t parse_positive(std::string_view flag, const char* text) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v <= 0) {
    std::fprintf(stderr, "dtrain-pi: %.*s: expected a positive integer, got \"%s\"\n",
                 static_cast<int>(flag.size()), flag.data(), text);
    std::exit(2);
  }
  return v;
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if ((arg == "--samples" || arg == "--steps" || arg == "--seed") && i + 1 < argc) {
      std::int64_t v = parse_positive(arg, argv[++i]);
      if (arg == "--samples") o.samples = v;
      if (arg == "--steps") o.steps = v;
      if (arg == "--seed") o.seed = static_cast<std::uint64_t>(v);
    } else {
      std::fprintf(stderr,
                   "usage: dtrain-pi [--samples N] [--steps N] [--seed N]\n"
                   "dtrain-pi: unexpected argument \"%s\"\n",
                   argv[i]);
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options opts = parse_args(argc, argv);
  dtrain::Context ctx = dtrain::init();
  const auto& world = ctx.world();
  dtrain::Meter meter(ctx);

  // Rank r draws an equal share; the first (samples % size) ranks draw one more.
  const std::int64_t share = opts.samples / world.size + (world.rank < opts.samples % world.size);
  Xoshiro256Plus rng(opts.seed * 1000003ULL + static_cast<std::uint64_t>(world.rank));
  std::int64_t hits = 0;
  std::int64_t drawn = 0;
  const auto started = std::chrono::steady_clock::now();
  for (std::int64_t step = 0; step < opts.steps; ++step) {
    const std::int64_t n = share * (step + 1) / opts.steps - drawn;
    const auto start = std::chrono::steady_clock::now();
    std::int64_t step_hits = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double x = rng.uniform();
      const double y = rng.uniform();
      step_hits += (x * x + y * y <= 1.0);
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    hits += step_hits;
    drawn += n;
    meter.record(step, n, took.count());
  }

  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
  std::printf("rank %d/%d: %lld samples in %.3f s\n", world.rank, world.size,
              static_cast<long long>(drawn), took.count());
  std::fflush(stdout);

  std::int64_t totals[2] = {hits, drawn};
  ctx.comm().allreduce(std::span<std::int64_t>(totals), dtrain::ReduceOp::kSum);
  meter.flush();

  if (world.rank == 0) {
    const double pi = 4.0 * static_cast<double>(totals[0]) / static_cast<double>(totals[1]);
    std::printf("pi ~= %.6f (error %.2e) from %lld samples on %d ranks\n", pi,
                std::abs(pi - std::numbers::pi), static_cast<long long>(totals[1]), world.size);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "dtrain-pi: %s\n", e.what());
  return 1;
}
