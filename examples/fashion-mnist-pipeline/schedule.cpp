#include "schedule.hpp"

#include <algorithm>
#include <limits>

namespace fmnist::pipeline {

std::vector<Op> stage_ops(Schedule schedule, int stage, int stages, int micro_batches) {
  std::vector<Op> ops;
  if (schedule == Schedule::kGpipe) {
    for (int m = 0; m < micro_batches; ++m) ops.push_back({true, m});
    for (int m = 0; m < micro_batches; ++m) ops.push_back({false, m});
    return ops;
  }
  // 1F1B: the later stages start their backward passes sooner, since the last stage can go
  // back as soon as it has a micro-batch's loss.
  const int warmup = std::min(stages - stage - 1, micro_batches);
  int forward = 0, backward = 0;
  for (; forward < warmup; ++forward) ops.push_back({true, forward});
  for (; forward < micro_batches; ++forward, ++backward) {
    ops.push_back({true, forward});
    ops.push_back({false, backward});
  }
  for (; backward < micro_batches; ++backward) ops.push_back({false, backward});
  return ops;
}

int in_flight(Schedule schedule, int stage, int stages, int micro_batches) {
  int pending = 0, most = 0;
  for (const Op& op : stage_ops(schedule, stage, stages, micro_batches)) {
    pending += op.forward ? 1 : -1;
    most = std::max(most, pending);
  }
  return most;
}

std::vector<std::size_t> partition(std::span<const std::size_t> costs, int stages) {
  const std::size_t layers = costs.size();
  const auto parts = static_cast<std::size_t>(stages);
  // best[k][i]: the least possible cost of the costliest stage when the first i layers form k
  // stages; cut[k][i] where the last of those stages begins. Few layers, so the plain O(k n^2).
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<std::vector<std::size_t>> best(parts + 1,
                                             std::vector<std::size_t>(layers + 1, kNone));
  std::vector<std::vector<std::size_t>> cut(parts + 1, std::vector<std::size_t>(layers + 1, 0));
  best[0][0] = 0;
  for (std::size_t k = 1; k <= parts; ++k) {
    for (std::size_t i = k; i <= layers; ++i) {
      std::size_t last = 0;  // the cost of layers [j, i)
      for (std::size_t j = i; j-- > k - 1;) {
        last += costs[j];
        if (best[k - 1][j] == kNone) continue;
        const std::size_t worst = std::max(best[k - 1][j], last);
        // j goes down from i: of equal costs the first found gives the later stages fewer layers.
        if (worst < best[k][i]) {
          best[k][i] = worst;
          cut[k][i] = j;
        }
      }
    }
  }
  std::vector<std::size_t> bounds(parts + 1, layers);
  for (std::size_t k = parts, i = layers; k > 0; --k) {
    i = cut[k][i];
    bounds[k - 1] = i;
  }
  return bounds;
}

}  // namespace fmnist::pipeline
