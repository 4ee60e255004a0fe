#include "stage.hpp"

#include "softmax_loss.hpp"

#include <algorithm>
#include <utility>

namespace fmnist::pipeline {
namespace {

// Messages of one kind from one rank arrive in the order sent, so the tags only tell the kinds
// apart; the micro-batch a message belongs to is its place in that order.
constexpr int kActivationTag = 1;
constexpr int kGradientTag = 2;
constexpr int kEvalTag = 3;

constexpr auto kFloat = dtrain::DType::kFloat32;

// Waits for a message's Work and leaves an empty one, whose wait() returns at once.
void finish(dtrain::Work& work) { std::exchange(work, dtrain::Work{}).wait(); }

std::size_t params_end(const Model& model, std::size_t end) {
  return end == model.layers().size() ? model.params().size() : model.param_offset(end);
}

}  // namespace

Stage::Stage(dtrain::Comm& comm, Model& model, std::size_t first_layer, std::size_t end,
             Schedule schedule, int micro_batches, std::size_t micro_batch)
    : comm_(comm),
      stage_(comm.rank()),
      stages_(comm.size()),
      layers_(model.layers().subspan(first_layer, end - first_layer)),
      params_(model.params().subspan(model.param_offset(first_layer),
                                     params_end(model, end) - model.param_offset(first_layer))),
      grads_(model.grads().subspan(model.param_offset(first_layer), params_.size())),
      ops_(stage_ops(schedule, stage_, stages_, micro_batches)),
      micro_batches_(micro_batches),
      micro_batch_(micro_batch),
      chunk_(model.train_chunk() > 0 ? std::min(model.train_chunk(), micro_batch) : micro_batch),
      eval_chunk_(model.eval_chunk()),
      in_floats_(layers_.front()->in_floats()),
      out_floats_(layers_.back()->out_floats()),
      slots_(in_flight(schedule, stage_, stages_, micro_batches)),
      slots_of_(static_cast<std::size_t>(slots_)) {
  const std::size_t chunks = (micro_batch + chunk_ - 1) / chunk_;
  for (Slot& slot : slots_of_) {
    slot.saved.resize(chunks * layers_.size());
    slot.output.resize(micro_batch * out_floats_);
    if (!first()) slot.input.resize(micro_batch * in_floats_);
    if (!first()) slot.input_grad.resize(micro_batch * in_floats_);
    if (!last()) slot.output_grad.resize(micro_batch * out_floats_);
  }
}

// Posted as soon as the slot is free, so that a micro-batch's data can arrive while this stage
// still computes earlier ones.
void Stage::post_receives(int micro_batch) {
  Slot& slot = slots_of_[static_cast<std::size_t>(micro_batch % slots_)];
  if (!first()) {
    slot.input_recv =
        comm_.irecv(slot.input.data(), slot.input.size(), kFloat, stage_ - 1, kActivationTag);
  }
  if (!last()) {
    slot.grad_recv = comm_.irecv(slot.output_grad.data(), slot.output_grad.size(), kFloat,
                                 stage_ + 1, kGradientTag);
  }
}

double Stage::train_step(const float* images, const std::uint8_t* labels) {
  std::fill(grads_.begin(), grads_.end(), 0.0f);
  loss_sum_ = 0.0;
  for (int m = 0; m < std::min(slots_, micro_batches_); ++m) post_receives(m);
  for (const Op& op : ops_) {
    if (op.forward) {
      forward(op.micro_batch, images, labels);
    } else {
      backward(op.micro_batch);
    }
  }
  // The step's last sends must be on their way before the next step writes their buffers.
  for (Slot& slot : slots_of_) {
    finish(slot.output_send);
    finish(slot.grad_send);
  }
  return loss_sum_;
}

void Stage::forward(int m, const float* images, const std::uint8_t* labels) {
  Slot& slot = slots_of_[static_cast<std::size_t>(m % slots_)];
  const auto at = static_cast<std::size_t>(m) * micro_batch_;
  const float* input = images + at * in_floats_;
  if (!first()) {
    finish(slot.input_recv);
    input = slot.input.data();
  }
  finish(slot.output_send);  // the micro-batch this slot held before may still be leaving
  const auto classes = static_cast<int>(out_floats_);
  for (std::size_t start = 0, c = 0; start < micro_batch_; start += chunk_, ++c) {
    const std::size_t n = std::min(chunk_, micro_batch_ - start);
    const float* out =
        forward_layers(layers_, params_.data(), input + start * in_floats_, n,
                       std::span(slot.saved).subspan(c * layers_.size(), layers_.size()));
    std::copy_n(out, n * out_floats_, slot.output.data() + start * out_floats_);
    if (last()) {
      // The loss of the whole batch is the mean over all micro-batches: each sample's gradient is
      // divided by the batch, not by the micro-batch.
      loss_sum_ +=
          softmax_cross_entropy(slot.output.data() + start * out_floats_, labels + at + start, n,
                                classes, micro_batch_ * static_cast<std::size_t>(micro_batches_));
    }
  }
  if (!last()) {
    slot.output_send =
        comm_.isend(slot.output.data(), slot.output.size(), kFloat, stage_ + 1, kActivationTag);
  }
}

void Stage::backward(int m) {
  Slot& slot = slots_of_[static_cast<std::size_t>(m % slots_)];
  // On the last stage forward() left the loss's gradient in `output`.
  const float* output_grad = slot.output.data();
  if (!last()) {
    finish(slot.grad_recv);
    output_grad = slot.output_grad.data();
  }
  finish(slot.grad_send);
  for (std::size_t start = 0, c = 0; start < micro_batch_; start += chunk_, ++c) {
    const std::size_t n = std::min(chunk_, micro_batch_ - start);
    // The first stage's input is the images, which are not trained.
    float* input_grad = first() ? nullptr : slot.input_grad.data() + start * in_floats_;
    backward_layers(layers_, params_.data(), grads_.data(),
                    std::span(slot.saved).subspan(c * layers_.size(), layers_.size()),
                    output_grad + start * out_floats_, n, input_grad);
  }
  if (!first()) {
    slot.grad_send = comm_.isend(slot.input_grad.data(), slot.input_grad.size(), kFloat, stage_ - 1,
                                 kGradientTag);
  }
  if (m + slots_ < micro_batches_) post_receives(m + slots_);
}

std::size_t Stage::count_correct(const float* images, const std::uint8_t* labels, std::size_t n,
                                 std::size_t eval_batch) {
  // Forward passes only, one batch after another: each stage receives a batch, computes it and
  // sends it on, so the stages work on consecutive batches at once. A send completes once its
  // bytes are on their way, so the blocking one does not wait for the next stage.
  std::vector<Saved> saved(layers_.size());
  std::vector<float> input, output;
  std::size_t correct = 0;
  for (std::size_t at = 0; at < n; at += eval_batch) {
    const std::size_t rows = std::min(eval_batch, n - at);
    const float* in = images + at * in_floats_;
    if (!first()) {
      input.resize(rows * in_floats_);
      comm_.recv(input.data(), input.size(), kFloat, stage_ - 1, kEvalTag);
      in = input.data();
    }
    output.resize(rows * out_floats_);
    for (std::size_t start = 0; start < rows; start += eval_chunk_) {
      const std::size_t k = std::min(eval_chunk_, rows - start);
      const float* out = forward_layers(layers_, params_.data(), in + start * in_floats_, k, saved);
      std::copy_n(out, k * out_floats_, output.data() + start * out_floats_);
    }
    if (!last()) {
      comm_.send(output.data(), output.size(), kFloat, stage_ + 1, kEvalTag);
      continue;
    }
    for (std::size_t i = 0; i < rows; ++i) {
      correct += predicted_class(output.data() + i * out_floats_, static_cast<int>(out_floats_)) ==
                 labels[at + i];
    }
  }
  return correct;
}

}  // namespace fmnist::pipeline
