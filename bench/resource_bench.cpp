// What resource sampling (docs/metrics.md, "type":"resource") costs the training step: the same
// steps of fixed compute, recorded by a Meter, with DTRAIN_RESOURCE_INTERVAL=0 (off), at the
// default 5 s, and at 0.05 s (100 times as often, to make any cost visible), interleaved in rounds
// so that the machine's drift hits every setting alike. Run it under `taskset -c 0` as well: on a
// rank bound to one core, the sampling thread can only run by preempting the training thread.
//
//   resource_bench [--steps N] [--rounds R] [--work N]
//
// One process (the single-process bootstrap): sampling is per rank, so more ranks measure the same.
// Reports only; never fails on a timing.
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dtrain/dtrain.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

// A step's compute: `work` multiply-adds over a buffer that stays in cache.
float compute(std::vector<float>& v, long work) {
  float acc = 0;
  for (long i = 0; i < work; ++i) {
    float& x = v[static_cast<std::size_t>(i) % v.size()];
    x = x * 0.999f + 0.001f;
    acc += x;
  }
  return acc;
}

struct Result {
  double seconds_per_step = 0;
  long samples = 0;  // resource records written
};

Result run(const char* interval, long steps, long work, const std::string& dir) {
  setenv("DTRAIN_RESOURCE_INTERVAL", interval, 1);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::vector<float> v(16384, 1.0f);
  volatile float sink = 0;
  Result r;
  {
    dtrain::Context ctx = dtrain::init();
    dtrain::Meter meter(ctx, dir);
    const auto start = std::chrono::steady_clock::now();
    for (long s = 0; s < steps; ++s) {
      meter.start_step();
      sink = sink + compute(v, work);
      meter.end_step(32);
    }
    r.seconds_per_step =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
        static_cast<double>(steps);
  }
  std::ifstream in(dir + "/rank-00000.jsonl");
  for (std::string l; std::getline(in, l);) r.samples += l.find("\"type\":\"resource\"") != l.npos;
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  long steps = 2000;
  int rounds = 5;
  long work = 1000000;  // about 1 ms on the development VM
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--steps") == 0) {
      steps = std::atol(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--rounds") == 0) {
      rounds = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--work") == 0) {
      work = std::atol(argv[i + 1]);
    } else {
      std::fprintf(stderr,
                   "resource_bench: unknown option %s; expected --steps, --rounds or --work\n",
                   argv[i]);
      return 2;
    }
  }
  if (steps < 1 || rounds < 1 || work < 1) {
    std::fprintf(stderr, "resource_bench: expected --steps, --rounds and --work of at least 1\n");
    return 2;
  }
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int cores = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : -1;
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("resource_bench_" + std::to_string(getpid())))
          .string();
  const char* settings[] = {"0", "5", "0.05"};
  std::vector<double> times[3];
  long samples[3] = {0, 0, 0};
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < 3; ++k) {
      const Result r = run(settings[k], steps, work, dir);
      times[k].push_back(r.seconds_per_step);
      samples[k] += r.samples;
    }
  }
  std::filesystem::remove_all(dir);
  std::printf(
      "# resource sampling: %ld steps of %ld multiply-adds, %d rounds interleaved, %d "
      "core(s) allowed\n",
      steps, work, rounds, cores);
  std::printf("# %-28s %12s %10s %14s\n", "DTRAIN_RESOURCE_INTERVAL", "ms/step", "vs off",
              "samples/round");
  const double off = median(times[0]);
  for (int k = 0; k < 3; ++k) {
    const double t = median(times[k]);
    std::printf("  %-28s %12.4f %10.4f %14.1f\n", settings[k], t * 1e3, t / off,
                static_cast<double>(samples[k]) / rounds);
  }
  return 0;
}
