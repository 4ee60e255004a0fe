#include "bench_common.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace coll_bench {

int rank = 0;
int size = 1;
long long total_wrong = 0;
nlohmann::ordered_json report = {{"benchmark", "dtrain coll_bench"}};

double time_op(const std::function<void()>& op, int reps, int batches) {
  op();  // warm-up: first touch, connection setup
  std::vector<double> t;
  for (int b = 0; b < batches; ++b) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < reps; ++i) op();
    double mine = (MPI_Wtime() - start) / reps;
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    t.push_back(slowest);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int reps_for(double seconds_per_op) {
  return std::max(1, static_cast<int>(0.05 / std::max(seconds_per_op, 1e-7)));
}

double measure(const std::function<void()>& op) {
  const double start = MPI_Wtime();
  op();
  double one = MPI_Wtime() - start;
  MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return time_op(op, reps_for(one), 5);
}

float filled(std::size_t i, int r) { return static_cast<float>((i % 64) * (r + 1)); }

void fill(std::vector<float>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = filled(i, rank);
}

long long wrong(const std::vector<float>& v, std::size_t first) {
  const float tri = static_cast<float>(size * (size + 1) / 2);  // the sum of the factors r + 1
  long long n = 0;
  for (std::size_t k = 0; k < v.size(); ++k) n += v[k] != filled(first + k, 0) * tri;
  return n;
}

long long wrong_gathered(const std::vector<float>& v, std::size_t count) {
  if (count == 0) return static_cast<long long>(v.size());  // no block to compare with
  long long n = 0;
  for (std::size_t k = 0; k < v.size(); ++k)
    n += v[k] != filled(k % count, static_cast<int>(k / count));
  return n;
}

std::vector<std::size_t> resnet50_shapes() {
  std::vector<std::size_t> s;
  const std::size_t bn[] = {64, 64, 128, 256, 256, 512, 512, 1024, 1024, 2048, 2048, 256};
  for (int i = 0; i < 108; ++i) s.push_back(bn[i % 12]);
  s.push_back(1000);
  std::vector<std::size_t> big;
  double x = 9408;
  for (int i = 0; i < 52; ++i, x *= 1.104) big.push_back(static_cast<std::size_t>(x));
  std::size_t have = 0;
  for (std::size_t v : s) have += v;
  for (std::size_t v : big) have += v;
  big.push_back(25557032 > have ? 25557032 - have : 1);
  s.insert(s.end(), big.begin(), big.end());
  return s;
}

std::string load_average() {
  char text[64] = "?";
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%63s", text) != 1) std::strcpy(text, "?");
    std::fclose(f);
  }
  return text;
}

}  // namespace coll_bench
