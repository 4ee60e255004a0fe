// One rank's stage of a pipeline-parallel model: some consecutive layers of the model, run on
// micro-batches that arrive from the previous stage's rank as messages (Comm::irecv) and leave
// for the next stage's (Comm::isend); gradients travel back the same way. The first stage reads
// the images, the last computes the loss from the labels. Its parameters, gradients and
// optimizer state are its layers' slice of the model's buffers.
#pragma once

#include "layers.hpp"
#include "model.hpp"
#include "schedule.hpp"

#include <dtrain/dtrain.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace fmnist::pipeline {

class Stage {
 public:
  // Layers [first_layer, end) of `model` on this rank, which is stage `comm.rank()` of
  // `comm.size()`; a step's batch comes as `micro_batches` micro-batches of `micro_batch` images,
  // in the order of `schedule`.
  Stage(dtrain::Comm& comm, Model& model, std::size_t first_layer, std::size_t end,
        Schedule schedule, int micro_batches, std::size_t micro_batch);

  bool first() const { return stage_ == 0; }
  bool last() const { return stage_ == stages_ - 1; }
  std::span<float> params() { return params_; }
  std::span<float> grads() { return grads_; }

  // One step's forward and backward passes over the batch: `images` (the first stage) and
  // `labels` (the last) hold micro_batches x micro_batch samples; elsewhere they are unused.
  // grads() receives the gradient of the batch's mean loss with respect to params(). Returns, on
  // the last stage, the sum of the samples' losses (0 elsewhere).
  double train_step(const float* images, const std::uint8_t* labels);

  // How many of `n` images (the first stage's `images`; the last stage's `labels`) the model
  // classifies as their label, on the last stage (0 elsewhere): the images go through the
  // stages `eval_batch` at a time.
  std::size_t count_correct(const float* images, const std::uint8_t* labels, std::size_t n,
                            std::size_t eval_batch);

 private:
  void forward(int micro_batch, const float* images, const std::uint8_t* labels);
  void backward(int micro_batch);
  void post_receives(int micro_batch);

  dtrain::Comm& comm_;
  const int stage_;
  const int stages_;
  const LayerList layers_;
  std::span<float> params_;
  std::span<float> grads_;
  const std::vector<Op> ops_;
  const int micro_batches_;
  const std::size_t micro_batch_;
  // Images per pass through the layers, as the whole model takes them (Model::train_chunk(),
  // eval_chunk()), so that the stages compute what it does.
  const std::size_t chunk_;
  const std::size_t eval_chunk_;
  const std::size_t in_floats_;
  const std::size_t out_floats_;
  const int slots_;  // micro-batches in flight; micro-batch m uses slot m % slots_

  // Per slot: one record per (chunk, layer), the input (received, or a view of the images), the
  // output sent on (or the loss gradient on the last stage), the gradient received from the next
  // stage and the one sent to the previous, and the messages in flight on each buffer.
  struct Slot {
    std::vector<Saved> saved;
    std::vector<float> input;
    std::vector<float> output;
    std::vector<float> output_grad;
    std::vector<float> input_grad;
    dtrain::Work input_recv, grad_recv, output_send, grad_send;
  };
  std::vector<Slot> slots_of_;
  double loss_sum_ = 0.0;
};

}  // namespace fmnist::pipeline
