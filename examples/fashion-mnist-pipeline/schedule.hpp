// What each stage of a pipeline does and in which order, as pure functions: which layers it
// holds (partition), and the order of its micro-batches' forward and backward passes in one step
// (schedule), GPipe's or 1F1B's.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace fmnist::pipeline {

// GPipe (Huang et al. 2019): every micro-batch forward, then every one backward; a stage keeps
// the activations of all micro-batches. 1F1B (PipeDream-Flush, Narayanan et al. 2021): after a
// warm-up of (stages - stage - 1) forward passes, each forward is followed by the oldest pending
// backward, so stage s keeps at most stages - s micro-batches in flight. Both compute the same
// gradients: each stage runs the backward passes in micro-batch order.
enum class Schedule { kGpipe, k1F1B };

struct Op {
  bool forward;     // else backward
  int micro_batch;  // 0 .. micro_batches - 1
  bool operator==(const Op&) const = default;
};

// Stage `stage` of `stages`: its passes of one step over `micro_batches` micro-batches, in order.
std::vector<Op> stage_ops(Schedule schedule, int stage, int stages, int micro_batches);

// The most micro-batches whose forward pass stage `stage` has done and whose backward it has not,
// at any point of stage_ops(): how many sets of activations it keeps.
int in_flight(Schedule schedule, int stage, int stages, int micro_batches);

// Splits layers of the given costs (multiply-adds per image) into `stages` runs of consecutive
// layers, each at least one, such that the costliest run costs as little as possible (the
// pipeline's pace is its slowest stage's); of equal splits, the one whose later stages hold
// fewer layers (the last stage computes the loss as well). Returns stages + 1 boundaries: stage s
// holds layers [b[s], b[s + 1]). Requires 1 <= stages <= costs.size().
std::vector<std::size_t> partition(std::span<const std::size_t> costs, int stages);

}  // namespace fmnist::pipeline
