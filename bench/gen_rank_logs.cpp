// Writes N rank logs of L lines each, as dtrain run-rank writes them, for the log-merge benchmark:
// DIR/rank-NNNNN.log, every line "<RFC 3339 timestamp> rank=R step=S loss=X msg=...", about 104
// bytes a line. Line i of every file falls in [i * 25 ms, (i + 1) * 25 ms) after the start, so
// timestamps rise within a file and interleave across files (docs/benchmarks.md, "Log merge").
//   gen_rank_logs DIR N L [SEED]
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "records/log_line.hpp"
#include "records/rank_files.hpp"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: gen_rank_logs DIR FILES LINES [SEED]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int files = std::atoi(argv[2]);
  const long lines = std::atol(argv[3]);
  const unsigned seed = argc > 4 ? static_cast<unsigned>(std::atoi(argv[4])) : 42;
  if (files <= 0 || lines <= 0) {
    std::fprintf(stderr, "gen_rank_logs: FILES and LINES must be > 0\n");
    return 2;
  }
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<long> jitter(0, 24999);
  std::uniform_real_distribution<double> loss(0.5, 3.0);
  const long long start = 1795341600LL * 1000000;  // 2026-11-22T10:00:00Z in microseconds
  static char buf[1 << 20];
  for (int f = 0; f < files; ++f) {
    const std::string name =
        "/" + dtrain::records::rank_file_name(f, dtrain::records::kLogExtension);
    FILE* out = std::fopen((dir + name).c_str(), "w");
    if (!out) {
      std::perror((dir + name).c_str());
      return 1;
    }
    std::setvbuf(out, buf, _IOFBF, sizeof buf);
    for (long i = 0; i < lines; ++i) {
      const long long t = start + i * 25000 + jitter(rng);
      std::fprintf(out,
                   "%s rank=%d step=%ld loss=%.4f msg=done epoch %ld batch of 256 samples in "
                   "flight\n",
                   dtrain::records::format_log_time(t).c_str(), f, i, loss(rng), i / 1000);
    }
    if (std::fclose(out) != 0) {
      std::perror((dir + name).c_str());
      return 1;
    }
  }
  return 0;
}
