// affinity_bench: how long the affinity library takes on real topologies, phase by phase (hwloc
// XML load into the Node value, solve, JSON report), in one process, so a regression shows which
// phase grew. `bench/topo_bench.sh` times the whole `dtrain topo` command. Reports only: no
// thresholds, no assertions (timings on shared CI machines are not pass/fail material).
//
//   affinity_bench [-n ITERATIONS] FILE.xml...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "affinity/affinity.hpp"
#include "affinity/report.hpp"
#include "affinity/topology.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using dtrain::affinity::Node;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 50;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-n" && i + 1 < argc) {
      iterations = std::max(1, std::atoi(argv[++i]));
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: affinity_bench [-n ITERATIONS] FILE.xml...\n");
    return 2;
  }
  // The budget from the issue: `dtrain topo` on the largest XML "well under 100 ms".
  constexpr double kBudgetMs = 100.0;
  std::printf("# affinity_bench: dtrain::affinity phases, median of %d iterations (ms)\n",
              iterations);
  std::printf("# budget for a whole `dtrain topo`: %.0f ms; share = total / budget\n", kBudgetMs);
  std::printf("%-34s %6s %5s %5s %5s %9s %8s %8s %8s %6s\n", "# file", "json_B", "cores", "gpus",
              "ranks", "load", "solve", "json", "total", "share");
  for (const auto& file : files) {
    std::vector<double> load_ms;
    std::vector<double> solve_ms;
    std::vector<double> json_ms;
    std::size_t bytes = 0;
    Node node;
    int ranks = 1;
    for (int it = 0; it < iterations; ++it) {
      auto t0 = Clock::now();
      node = dtrain::affinity::load_node_xml(file);
      load_ms.push_back(ms_since(t0));
      ranks = std::max<int>(
          1, static_cast<int>(std::min(node.gpus.empty() ? node.numa.size() : node.gpus.size(),
                                       node.cores.size())));
      t0 = Clock::now();
      const auto map = dtrain::affinity::solve(node, ranks, {});
      solve_ms.push_back(ms_since(t0));
      t0 = Clock::now();
      const std::string text = dtrain::affinity::topology_to_json(node, map).dump(2);
      json_ms.push_back(ms_since(t0));
      bytes = text.size();
    }
    const double total = median(load_ms) + median(solve_ms) + median(json_ms);
    std::printf("%-34s %6zu %5zu %5zu %5d %9.3f %8.3f %8.3f %8.3f %5.1f%%\n",
                base_name(file).c_str(), bytes, node.cores.size(), node.gpus.size(), ranks,
                median(load_ms), median(solve_ms), median(json_ms), total,
                100.0 * total / kBudgetMs);
  }
  return 0;
}
