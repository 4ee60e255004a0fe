#include "schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace fmnist::pipeline {
namespace {

std::string text(const std::vector<Op>& ops) {
  std::string s;
  for (const Op& op : ops) {
    s += (s.empty() ? "" : " ") + std::string(op.forward ? "F" : "B") +
         std::to_string(op.micro_batch);
  }
  return s;
}

TEST(PipelineSchedule, GpipeRunsEveryForwardThenEveryBackward) {
  EXPECT_EQ(text(stage_ops(Schedule::kGpipe, 0, 3, 3)), "F0 F1 F2 B0 B1 B2");
  EXPECT_EQ(text(stage_ops(Schedule::kGpipe, 2, 3, 3)), "F0 F1 F2 B0 B1 B2");
  EXPECT_EQ(in_flight(Schedule::kGpipe, 1, 3, 5), 5);
}

TEST(PipelineSchedule, OneForwardOneBackwardAfterAWarmUpOfTheStagesBelow) {
  EXPECT_EQ(text(stage_ops(Schedule::k1F1B, 0, 3, 4)), "F0 F1 F2 B0 F3 B1 B2 B3");
  EXPECT_EQ(text(stage_ops(Schedule::k1F1B, 1, 3, 4)), "F0 F1 B0 F2 B1 F3 B2 B3");
  EXPECT_EQ(text(stage_ops(Schedule::k1F1B, 2, 3, 4)), "F0 B0 F1 B1 F2 B2 F3 B3");
  EXPECT_EQ(text(stage_ops(Schedule::k1F1B, 0, 4, 2)), "F0 F1 B0 B1");  // fewer than stages
  EXPECT_EQ(in_flight(Schedule::k1F1B, 0, 3, 4), 3);
  EXPECT_EQ(in_flight(Schedule::k1F1B, 2, 3, 4), 1);
  EXPECT_EQ(in_flight(Schedule::k1F1B, 0, 4, 2), 2);
}

// Every stage runs its ops in order; a forward needs the previous stage's forward of that
// micro-batch, a backward the next stage's backward (sends never block: libdtrain's complete
// once on their way). Each schedule must run to the end, and each stage's backward passes go in
// micro-batch order (so its gradients add up in the order the whole model adds them).
TEST(PipelineSchedule, EveryStageRunsToTheEndWithBackwardsInOrder) {
  for (Schedule schedule : {Schedule::kGpipe, Schedule::k1F1B}) {
    for (int stages = 1; stages <= 5; ++stages) {
      for (int micro = 1; micro <= 9; ++micro) {
        std::vector<std::vector<Op>> ops;
        for (int s = 0; s < stages; ++s) ops.push_back(stage_ops(schedule, s, stages, micro));
        std::vector<std::vector<int>> forward_done(stages), backward_done(stages);
        std::vector<std::size_t> next(stages, 0);
        for (bool moved = true; moved;) {
          moved = false;
          for (int s = 0; s < stages; ++s) {
            if (next[s] == ops[s].size()) continue;
            const Op op = ops[s][next[s]];
            const auto has = [](const std::vector<int>& done, int m) {
              return std::find(done.begin(), done.end(), m) != done.end();
            };
            const bool ready = op.forward
                                   ? s == 0 || has(forward_done[s - 1], op.micro_batch)
                                   : s == stages - 1 || has(backward_done[s + 1], op.micro_batch);
            if (!ready) continue;
            (op.forward ? forward_done : backward_done)[s].push_back(op.micro_batch);
            ++next[s];
            moved = true;
          }
        }
        for (int s = 0; s < stages; ++s) {
          ASSERT_EQ(next[s], ops[s].size()) << "stage " << s << " of " << stages << ", " << micro
                                            << " micro-batches: stuck at " << text(ops[s]);
          std::vector<int> in_order(micro);
          for (int m = 0; m < micro; ++m) in_order[m] = m;
          EXPECT_EQ(backward_done[s], in_order);
        }
      }
    }
  }
}

TEST(PipelinePartition, TheCostliestStageAsCheapAsPossible) {
  // The cnn 8,16's layers: conv 5x5 8, conv 3x3 16, dense 784-10.
  const std::vector<std::size_t> cnn = {156800, 225792, 7840};
  EXPECT_EQ(partition(cnn, 1), (std::vector<std::size_t>{0, 3}));
  EXPECT_EQ(partition(cnn, 2), (std::vector<std::size_t>{0, 1, 3}));
  EXPECT_EQ(partition(cnn, 3), (std::vector<std::size_t>{0, 1, 2, 3}));
  const std::vector<std::size_t> even = {1, 1, 1, 1};
  EXPECT_EQ(partition(even, 2), (std::vector<std::size_t>{0, 2, 4}));
  const std::vector<std::size_t> heavy_first = {10, 1, 1, 1, 1};
  EXPECT_EQ(partition(heavy_first, 2), (std::vector<std::size_t>{0, 1, 5}));
  // Of equal splits, the later stages hold fewer layers.
  const std::vector<std::size_t> ties = {5, 0, 0, 5};
  EXPECT_EQ(partition(ties, 2), (std::vector<std::size_t>{0, 3, 4}));
}

}  // namespace
}  // namespace fmnist::pipeline
