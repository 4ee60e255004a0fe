// The command-line options every Fashion-MNIST training program of the examples shares (this
// one, data-parallel, and examples/fashion-mnist-pipeline): the data, the schedule, the model and
// its size, with the same names, defaults and checks in both, so that a pipeline run and its
// data-parallel sibling are told the same things the same way.
#pragma once

#include "model.hpp"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace fmnist {

struct TrainingOptions {
  std::string data;
  int epochs = 5;
  std::int64_t global_batch = 128;
  float lr = 0.0f;  // for a batch of 64, scaled with the global batch; 0: the model's default
  float momentum = 0.9f;
  std::int64_t warmup_steps = 200;
  std::string model = "cnn";
  std::string channels = "8,16";
  std::string hidden = "256,128";
  std::uint64_t seed = 2026;
  std::int64_t steps_per_epoch = 0;  // 0: the whole training set
  std::int64_t log_every = 100;
};

// --data, --epochs, --global-batch, --lr, --momentum, --warmup-steps, --model, --channels,
// --hidden, --seed, --steps-per-epoch and --log-every, bound to `options`.
void add_training_options(CLI::App& app, TrainingOptions& options);

// After parsing: refuses a size option of the model not trained and a malformed size (throwing
// CLI::ValidationError naming the option), and sets the model's default learning rate when
// --lr was not given.
void check_training_options(const CLI::App& app, TrainingOptions& options);

// The model the options describe, for images of `features` pixels (not yet initialized).
std::unique_ptr<Model> make_model(const TrainingOptions& options, std::size_t features);

}  // namespace fmnist
