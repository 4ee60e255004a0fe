// Fashion-MNIST trained pipeline-parallel with libdtrain: the model's layers split into stages,
// one stage per rank, and each step's batch sent through them as micro-batches. What a code does
// to train a model in a pipeline:
//   1. init: dtrain::init() finds this rank's place in the job: its rank is its stage.
//   2. partition: the layers into as many runs of consecutive layers as there are ranks, the
//      costliest run as cheap as possible (multiply-adds per image).
//   3. build: every rank builds the whole model from the seed (it is small), so that each stage
//      starts from the weights the data-parallel run (examples/fashion-mnist) starts from, and
//      trains only its own layers' slice of them.
//   4. step: the global batch as micro-batches, forward through the stages and back, in the
//      order of a schedule (1F1B or GPipe); activations go to the next stage and gradients to the
//      previous one as messages (Comm::isend, Comm::irecv), received into buffers posted ahead.
//   5. update: each stage steps its own parameters with the gradient of the whole batch; no
//      collective at all, since no parameter lives on two ranks.
//   6. report: the last stage, which computes the loss, sends it to rank 0, which prints it; the
//      test set goes through the stages the same way and the last one counts.
//   7. meter: every rank records its step time for `dtrain stats`; the first stage counts the
//      samples, once each, so the total is the pipeline's throughput.
// With the cnn and micro-batches of a multiple of 8 images, each stage takes its micro-batches
// through its layers in the chunks of 8 that the whole model takes (Model::train_chunk), in the
// same order: the run computes what examples/fashion-mnist computes on 1 rank, bit for bit.
#include "dataset.hpp"
#include "optimizer.hpp"
#include "schedule.hpp"
#include "stage.hpp"
#include "training_options.hpp"

#include <dtrain/dtrain.hpp>
#include <dtrain/shard.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace pipeline = fmnist::pipeline;

constexpr int kLossTag = 10;
constexpr int kCountTag = 11;
constexpr std::size_t kEvalBatch = 1000;

struct Options : fmnist::TrainingOptions {
  int micro_batches = 4;
  std::string schedule = "1f1b";
};

// Step 2, on every rank alike: the boundaries of each stage's layers.
std::vector<std::size_t> stage_bounds(const fmnist::Model& model, int stages) {
  const fmnist::LayerList layers = model.layers();
  if (static_cast<std::size_t>(stages) > layers.size()) {
    throw std::runtime_error(
        "the model " + model.describe() + " has " + std::to_string(layers.size()) +
        " layers and each stage, one per rank, holds at least one; expected at most " +
        std::to_string(layers.size()) + " ranks, got " + std::to_string(stages) +
        " (--model mlp has a layer per --hidden width and one more)");
  }
  std::vector<std::size_t> costs;
  for (const auto& layer : layers) costs.push_back(layer->macs());
  return pipeline::partition(costs, stages);
}

class Training {
 public:
  Training(dtrain::Context& ctx, const Options& opts)
      : opts_(opts),
        world_(ctx.world()),
        comm_(ctx.comm()),
        meter_(ctx),
        root_(world_.rank == 0),
        data_dir_(fmnist::find_data_dir(opts.data)),
        train_set_(fmnist::load_split(data_dir_, "train")),
        test_set_(fmnist::load_split(data_dir_, "t10k")),
        model_(fmnist::make_model(opts, train_set_.features)),
        bounds_(stage_bounds(*model_, world_.size)),
        schedule_(opts.schedule == "gpipe" ? pipeline::Schedule::kGpipe
                                           : pipeline::Schedule::k1F1B),
        micro_batch_(static_cast<std::size_t>(opts.global_batch / opts.micro_batches)),
        stage_(comm_, *model_, bounds_[static_cast<std::size_t>(world_.rank)],
               bounds_[static_cast<std::size_t>(world_.rank) + 1], schedule_, opts.micro_batches,
               micro_batch_),
        optimizer_(stage_.params().size(), opts.momentum),
        // Every stage sees the whole batch: the order of one rank, the data-parallel run's.
        shard_(train_set_.count, 0, 1,
               {.shuffle = true, .seed = opts.seed, .tail = dtrain::ShardTail::kDrop}) {
    steps_per_epoch_ = static_cast<std::int64_t>(train_set_.count) / opts.global_batch;
    if (opts.steps_per_epoch > 0) {
      steps_per_epoch_ = std::min(steps_per_epoch_, opts.steps_per_epoch);
    }
    model_->init(opts.seed);  // step 3
  }

  int run() {
    print_banner();
    std::int64_t global_step = 0;
    for (int epoch = 0; epoch < opts_.epochs; ++epoch) {
      const auto epoch_start = std::chrono::steady_clock::now();
      const std::vector<std::uint64_t> order = shard_.indices(static_cast<std::uint64_t>(epoch));
      double loss_sum = 0.0;
      for (std::int64_t k = 0; k < steps_per_epoch_; ++k, ++global_step) {
        loss_sum += step(order, k, global_step);
      }
      const double accuracy = test_accuracy();
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - epoch_start;
      if (root_) {
        std::printf("epoch %d/%d: train loss %.4f, test accuracy %.2f %%, %.1f s\n", epoch + 1,
                    opts_.epochs, loss_sum / static_cast<double>(steps_per_epoch_),
                    100.0 * accuracy, took.count());
        std::fflush(stdout);
      }
    }
    meter_.flush();
    const double accuracy = test_accuracy();
    if (root_) {
      std::printf("final test accuracy %.2f %% after %d epoch%s on %d ranks\n", 100.0 * accuracy,
                  opts_.epochs, opts_.epochs == 1 ? "" : "s", world_.size);
    }
    return 0;
  }

 private:
  void print_banner() const {
    if (!root_) return;
    std::printf(
        "fashion-mnist-pipeline: %d stage%s on %d ranks, %zu training images (%lld steps/epoch "
        "of global batch %lld as %d micro-batches of %zu, schedule %s), %zu test images, model "
        "%s, %d epoch%s, seed %llu\n",
        world_.size, world_.size == 1 ? "" : "s", world_.size, train_set_.count,
        static_cast<long long>(steps_per_epoch_), static_cast<long long>(opts_.global_batch),
        opts_.micro_batches, micro_batch_, opts_.schedule.c_str(), test_set_.count,
        model_->describe().c_str(), opts_.epochs, opts_.epochs == 1 ? "" : "s",
        static_cast<unsigned long long>(opts_.seed));
    const fmnist::LayerList layers = model_->layers();
    for (int s = 0; s < world_.size; ++s) {
      std::string names;
      std::size_t macs = 0;
      for (std::size_t l = bounds_[static_cast<std::size_t>(s)];
           l < bounds_[static_cast<std::size_t>(s) + 1]; ++l) {
        names += (names.empty() ? "" : ", ") + layers[l]->describe();
        macs += layers[l]->macs();
      }
      std::printf("stage %d (rank %d): %s; %zu multiply-adds per image\n", s, s, names.c_str(),
                  macs);
    }
    std::fflush(stdout);
  }

  // Steps 4-7 for global batch k of the epoch's order; returns the batch's mean loss.
  double step(const std::vector<std::uint64_t>& order, std::int64_t k, std::int64_t global_step) {
    const auto start = std::chrono::steady_clock::now();
    const auto batch = static_cast<std::size_t>(opts_.global_batch);
    if (stage_.first() || stage_.last()) {
      fmnist::gather_batch(train_set_,
                           std::span(order).subspan(static_cast<std::size_t>(k) * batch, batch),
                           images_, labels_);
    }
    double loss = stage_.train_step(images_.data(), labels_.data()) / static_cast<double>(batch);
    const float lr = fmnist::learning_rate(global_step, opts_.lr, opts_.global_batch,
                                           opts_.warmup_steps, steps_per_epoch_ * opts_.epochs);
    optimizer_.step(stage_.params(), stage_.grads(), lr);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    meter_.record(global_step, stage_.first() ? opts_.global_batch : 0, took.count());
    // The loss as the data-parallel run prints it: a float.
    loss = static_cast<double>(static_cast<float>(loss));
    if (world_.size > 1 && stage_.last()) {
      comm_.send(&loss, 1, dtrain::DType::kFloat64, 0, kLossTag);
    }
    if (world_.size > 1 && root_) {
      comm_.recv(&loss, 1, dtrain::DType::kFloat64, world_.size - 1, kLossTag);
    }
    if (root_ && opts_.log_every > 0 && (global_step + 1) % opts_.log_every == 0) {
      std::printf("step %lld loss %.6f lr %.5f\n", static_cast<long long>(global_step + 1), loss,
                  static_cast<double>(lr));
      std::fflush(stdout);
    }
    return loss;
  }

  double test_accuracy() {
    std::int64_t correct = static_cast<std::int64_t>(stage_.count_correct(
        test_set_.images.data(), test_set_.labels.data(), test_set_.count, kEvalBatch));
    if (world_.size > 1 && stage_.last()) {
      comm_.send(&correct, 1, dtrain::DType::kInt64, 0, kCountTag);
    }
    if (world_.size > 1 && root_) {
      comm_.recv(&correct, 1, dtrain::DType::kInt64, world_.size - 1, kCountTag);
    }
    return static_cast<double>(correct) / static_cast<double>(test_set_.count);
  }

  const Options& opts_;
  const dtrain::WorldInfo& world_;
  dtrain::Comm& comm_;
  dtrain::Meter meter_;
  const bool root_;
  const std::string data_dir_;
  const fmnist::Dataset train_set_;
  const fmnist::Dataset test_set_;
  const std::unique_ptr<fmnist::Model> model_;
  const std::vector<std::size_t> bounds_;
  const pipeline::Schedule schedule_;
  const std::size_t micro_batch_;
  pipeline::Stage stage_;
  fmnist::Sgd optimizer_;
  const dtrain::Shard shard_;
  std::int64_t steps_per_epoch_ = 0;
  std::vector<float> images_;
  std::vector<std::uint8_t> labels_;
};

}  // namespace

int main(int argc, char** argv) {
  Options opts;
  CLI::App app{"Fashion-MNIST trained pipeline-parallel with libdtrain: one stage per rank",
               "dtrain-fashion-mnist-pipeline"};
  fmnist::add_training_options(app, opts);
  app.add_option("--micro-batches", opts.micro_batches,
                 "micro-batches per global batch (a divisor of it)")
      ->check(CLI::Range(1, 60000));
  app.add_option("--schedule", opts.schedule,
                 "1f1b: each forward pass followed by the oldest pending backward; gpipe: all "
                 "forward, then all backward")
      ->check(CLI::IsMember({"1f1b", "gpipe"}));
  try {
    app.parse(argc, argv);
    fmnist::check_training_options(app, opts);
    if (opts.global_batch % opts.micro_batches != 0) {
      throw CLI::ValidationError("--micro-batches", "expected a divisor of --global-batch " +
                                                        std::to_string(opts.global_batch) +
                                                        ", got " +
                                                        std::to_string(opts.micro_batches));
    }
    dtrain::Context ctx = dtrain::init();
    return Training(ctx, opts).run();
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    return status == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtrain-fashion-mnist-pipeline: %s\n", e.what());
    return 1;
  }
}
