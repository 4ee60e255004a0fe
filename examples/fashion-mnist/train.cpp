// Fashion-MNIST with libdtrain: the steps a code follows to train data-parallel (Horovod's list).
//   1. init: dtrain::init() finds this rank's place in the job.
//   2. device: this example trains on the CPU; the core each rank runs on was pinned by
//      `dtrain bind` before it started.
//   3. shard the data: each rank takes every size-th sample of the epoch's permutation.
//   4. scale the learning rate with the global batch, with a linear warm-up.
//   5. average gradients: one fused allreduce (kAvg) per step.
//   6. broadcast the initial parameters from rank 0.
//   7. checkpoint on rank 0 (collectively), resume from the latest, stop cleanly on SIGUSR1/TERM.
//   8. average metrics: the test accuracy of each epoch is summed over the ranks' test shards and
//      printed by rank 0; a Meter records every step for `dtrain stats`.
#include "cnn.hpp"
#include "dataset.hpp"
#include "mlp.hpp"
#include "optimizer.hpp"
#include "train_state.hpp"

#include <dtrain/checkpoint.hpp>
#include <dtrain/dtrain.hpp>
#include <dtrain/preemption.hpp>
#include <dtrain/shard.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Options {
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
  std::string checkpoint_dir;  // "": DTRAIN_RUN_DIR/checkpoints when set, else none
  std::int64_t checkpoint_every = 0;
  bool no_checkpoint = false;
};

// "a,b,c" -> {a, b, c}, each 1 .. max; `option` names the flag in the error.
std::vector<int> parse_int_list(const std::string& text, const std::string& option, int max) {
  std::vector<int> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > max) {
      throw CLI::ValidationError(option, "expected numbers 1-" + std::to_string(max) +
                                             " separated by commas, got \"" + text + "\"");
    }
    values.push_back(static_cast<int>(v));
  }
  if (values.empty()) {
    throw CLI::ValidationError(option, "expected numbers 1-" + std::to_string(max) +
                                           " separated by commas, got \"" + text + "\"");
  }
  return values;
}

// The learning rates for a batch of 64 that train each model stably from the first step: the
// cnn's max-pooled features are large, so its output layer moves fast at the mlp's rate (the
// loss jumped to 5.6 in the third step at 0.05).
float default_lr(const std::string& model) { return model == "cnn" ? 0.01f : 0.05f; }

// The model's sizes from --channels (cnn: two channel counts) or --hidden (mlp: the hidden
// widths), checked before anything is loaded.
std::vector<int> model_sizes(const Options& o) {
  if (o.model == "cnn") {
    std::vector<int> c = parse_int_list(o.channels, "--channels", 1024);
    if (c.size() != 2) {
      throw CLI::ValidationError("--channels",
                                 "expected the two convolutions' channel counts, "
                                 "e.g. 8,16, got \"" +
                                     o.channels + "\"");
    }
    return c;
  }
  return parse_int_list(o.hidden, "--hidden", 65536);
}

std::unique_ptr<fmnist::Model> make_model(const Options& o, std::size_t features) {
  const std::vector<int> sizes = model_sizes(o);
  if (o.model == "cnn") return std::make_unique<fmnist::Cnn>(sizes[0], sizes[1]);
  std::vector<int> widths = {static_cast<int>(features)};
  widths.insert(widths.end(), sizes.begin(), sizes.end());
  widths.push_back(fmnist::kClasses);
  return std::make_unique<fmnist::Mlp>(std::move(widths));
}

std::string default_checkpoint_dir(const Options& o) {
  if (o.no_checkpoint) return "";
  if (!o.checkpoint_dir.empty()) return o.checkpoint_dir;
  const char* run_dir = std::getenv("DTRAIN_RUN_DIR");
  return run_dir != nullptr && *run_dir != '\0' ? std::string(run_dir) + "/checkpoints" : "";
}

// Step 5: the model's gradients and two scalars (this rank's loss and whether it got a stop
// signal) averaged over the ranks in one fused collective. A stop flag above 0 after averaging
// means at least one rank was signalled, so every rank learns it at the same step: what
// Preemption::should_stop() does with an allreduce of its own, here without a second collective
// per step.
class StepReducer {
  // Small buckets: the gradient buffer (~1 MB) is then reduced where it lies instead of being
  // copied into a bucket and back, and only the two scalars are packed.
  static constexpr std::size_t kBucketBytes = 64 * 1024;

 public:
  StepReducer(dtrain::Comm& comm, std::span<float> grads)
      : fused_(comm, {{grads.data(), grads.size()}, {scalars_, 2}}, dtrain::DType::kFloat32,
               dtrain::ReduceOp::kAvg, kBucketBytes) {}

  struct Result {
    float loss;
    bool stop;
  };
  Result run(float loss, bool stop) {
    scalars_[0] = loss;
    scalars_[1] = stop ? 1.0f : 0.0f;
    fused_.run();
    return {scalars_[0], scalars_[1] > 0.0f};
  }

 private:
  float scalars_[2] = {0.0f, 0.0f};
  dtrain::FusedAllreduce fused_;
};

// Step 8: the test set split into contiguous, exactly-once slices; the counts are summed, so the
// accuracy is that of the whole test set whatever the number of ranks.
double test_accuracy(dtrain::Comm& comm, fmnist::Model& model, const fmnist::Dataset& test) {
  const auto size = static_cast<std::size_t>(comm.size());
  const auto rank = static_cast<std::size_t>(comm.rank());
  const std::size_t begin = test.count * rank / size;
  const std::size_t end = test.count * (rank + 1) / size;
  std::int64_t counts[2] = {static_cast<std::int64_t>(model.count_correct(
                                test.image(begin), test.labels.data() + begin, end - begin)),
                            static_cast<std::int64_t>(end - begin)};
  comm.allreduce(std::span<std::int64_t>(counts), dtrain::ReduceOp::kSum);
  return static_cast<double>(counts[0]) / static_cast<double>(counts[1]);
}

void gather_batch(const fmnist::Dataset& data, std::span<const std::uint64_t> indices,
                  std::vector<float>& images, std::vector<std::uint8_t>& labels) {
  images.resize(indices.size() * data.features);
  labels.resize(indices.size());
  for (std::size_t i = 0; i < indices.size(); ++i) {
    std::copy_n(data.image(indices[i]), data.features, images.data() + i * data.features);
    labels[i] = data.labels[indices[i]];
  }
}

int train(const Options& opts) {
  dtrain::Context ctx = dtrain::init();
  const dtrain::WorldInfo& world = ctx.world();
  dtrain::Comm& comm = ctx.comm();
  dtrain::Meter meter(ctx);
  const bool root = world.rank == 0;
  dtrain::Preemption preemption(ctx);  // SIGUSR1 and SIGTERM, or DTRAIN_PREEMPT_SIGNALS

  if (opts.global_batch % world.size != 0) {
    throw CLI::ValidationError("--global-batch", "expected a multiple of the " +
                                                     std::to_string(world.size) + " ranks, got " +
                                                     std::to_string(opts.global_batch));
  }
  const std::string data_dir = fmnist::find_data_dir(opts.data);
  const fmnist::Dataset train_set = fmnist::load_split(data_dir, "train");
  const fmnist::Dataset test_set = fmnist::load_split(data_dir, "t10k");
  const std::int64_t local_batch = opts.global_batch / world.size;
  std::int64_t steps_per_epoch = static_cast<std::int64_t>(train_set.count) / opts.global_batch;
  if (opts.steps_per_epoch > 0) steps_per_epoch = std::min(steps_per_epoch, opts.steps_per_epoch);

  const std::unique_ptr<fmnist::Model> model_ptr = make_model(opts, train_set.features);
  fmnist::Model& model = *model_ptr;
  fmnist::Sgd optimizer(model.params().size(), opts.momentum);
  model.init(opts.seed);
  comm.broadcast(model.params(), 0);  // step 6

  // Step 3: each rank's share of every epoch's permutation (DistributedSampler semantics). The
  // loop below takes whole global batches only, so what lies past steps_per_epoch is never used.
  const dtrain::Shard shard(train_set.count, world,
                            {.shuffle = true, .seed = opts.seed, .tail = dtrain::ShardTail::kDrop});

  const std::string checkpoint_dir = default_checkpoint_dir(opts);
  std::optional<dtrain::Checkpointer> checkpointer;
  fmnist::TrainPosition pos;
  if (!checkpoint_dir.empty()) {
    dtrain::CheckpointOptions options;
    options.keep = 2;
    checkpointer.emplace(ctx, checkpoint_dir, options);
    if (auto c = checkpointer->load_latest()) {
      pos = fmnist::decode_state(
          std::span(reinterpret_cast<const std::uint8_t*>(c->data.data()), c->data.size()), c->path,
          model.params(), optimizer.velocity());
      if (pos.global_batch != opts.global_batch || pos.seed != opts.seed) {
        throw fmnist::DataError(
            c->path + ": saved by a run with --global-batch " + std::to_string(pos.global_batch) +
            " --seed " + std::to_string(pos.seed) + "; expected --global-batch " +
            std::to_string(opts.global_batch) + " --seed " + std::to_string(opts.seed) +
            " to resume it (or another --checkpoint-dir)");
      }
      if (root) {
        for (const std::string& skipped : c->skipped) std::printf("warning: %s\n", skipped.c_str());
        std::printf("resumed from %s at epoch %lld, step %lld\n", c->path.c_str(),
                    static_cast<long long>(pos.epoch + 1), static_cast<long long>(pos.global_step));
      }
    }
  }
  pos.global_batch = opts.global_batch;
  pos.seed = opts.seed;
  const auto save = [&](fmnist::TrainPosition at) {
    at.global_batch = opts.global_batch;
    at.seed = opts.seed;
    const std::vector<std::uint8_t> bytes =
        fmnist::encode_state(at, model.params(), optimizer.velocity());
    checkpointer->save(at.global_step, std::as_bytes(std::span(bytes)));
  };
  if (root) {
    std::printf(
        "fashion-mnist: %d ranks, %zu training images (%lld steps/epoch of global batch %lld, "
        "%lld per rank), %zu test images, model %s, %d epochs, seed %llu\n",
        world.size, train_set.count, static_cast<long long>(steps_per_epoch),
        static_cast<long long>(opts.global_batch), static_cast<long long>(local_batch),
        test_set.count, model.describe().c_str(), opts.epochs,
        static_cast<unsigned long long>(opts.seed));
    std::fflush(stdout);
  }

  StepReducer reducer(comm, model.grads());
  std::vector<float> batch_images;
  std::vector<std::uint8_t> batch_labels;
  for (; pos.epoch < opts.epochs; ++pos.epoch, pos.step_in_epoch = 0, pos.epoch_loss_sum = 0.0) {
    const auto epoch_start = std::chrono::steady_clock::now();
    // Rank r's step k holds positions r, r + size, ... of global batch k of the epoch's order, so
    // the ranks together see exactly the samples one rank sees at step k: a 1-rank and a 2-rank
    // run with the same global batch compute the same averaged gradients, up to rounding.
    const std::vector<std::uint64_t> data_shard =
        shard.indices(static_cast<std::uint64_t>(pos.epoch));
    for (; pos.step_in_epoch < steps_per_epoch;) {
      const auto start = std::chrono::steady_clock::now();
      gather_batch(train_set,
                   std::span(data_shard)
                       .subspan(static_cast<std::size_t>(pos.step_in_epoch * local_batch),
                                static_cast<std::size_t>(local_batch)),
                   batch_images, batch_labels);
      const float local_loss = model.loss_and_grads(batch_images.data(), batch_labels.data(),
                                                    static_cast<std::size_t>(local_batch));
      const auto reduced = reducer.run(local_loss, preemption.requested());
      const float lr = fmnist::learning_rate(pos.global_step, opts.lr, opts.global_batch,
                                             opts.warmup_steps, steps_per_epoch * opts.epochs);
      optimizer.step(model.params(), model.grads(), lr);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      meter.record(pos.global_step, local_batch, took.count());
      pos.epoch_loss_sum += reduced.loss;
      ++pos.step_in_epoch;
      ++pos.global_step;
      if (root && opts.log_every > 0 && pos.global_step % opts.log_every == 0) {
        std::printf("step %lld loss %.6f lr %.5f\n", static_cast<long long>(pos.global_step),
                    static_cast<double>(reduced.loss), static_cast<double>(lr));
        std::fflush(stdout);
      }
      if (reduced.stop) {
        if (checkpointer) save(pos);
        if (root) {
          std::printf("stopping at step %lld on a signal: %s\n",
                      static_cast<long long>(pos.global_step),
                      checkpointer ? ("checkpoint saved in " + checkpoint_dir).c_str()
                                   : "no checkpoint directory, nothing saved");
        }
        meter.flush();
        return dtrain::kExitRequeue;
      }
      if (checkpointer && opts.checkpoint_every > 0 &&
          pos.global_step % opts.checkpoint_every == 0 && pos.step_in_epoch < steps_per_epoch) {
        save(pos);
      }
    }
    const double accuracy = test_accuracy(comm, model, test_set);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - epoch_start;
    if (root) {
      std::printf("epoch %lld/%d: train loss %.4f, test accuracy %.2f %%, %.1f s\n",
                  static_cast<long long>(pos.epoch + 1), opts.epochs,
                  pos.epoch_loss_sum / static_cast<double>(steps_per_epoch), 100.0 * accuracy,
                  took.count());
      std::fflush(stdout);
    }
    if (checkpointer) save({pos.epoch + 1, 0, pos.global_step, 0.0, 0, 0});
  }
  meter.flush();
  if (root) {
    const double accuracy = test_accuracy(comm, model, test_set);
    std::printf("final test accuracy %.2f %% after %d epochs on %d ranks\n", 100.0 * accuracy,
                opts.epochs, world.size);
  } else {
    test_accuracy(comm, model, test_set);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts;
  CLI::App app{"Fashion-MNIST trained data-parallel with libdtrain", "dtrain-fashion-mnist"};
  app.add_option("--data", opts.data,
                 "directory with the four *-ubyte.gz files (default: " +
                     std::string(fmnist::kDebianDataDir) + ")");
  app.add_option("--epochs", opts.epochs, "epochs to train")->check(CLI::Range(1, 1000));
  app.add_option("--global-batch", opts.global_batch, "samples per step over all ranks")
      ->check(CLI::Range(1, 60000));
  app.add_option("--lr", opts.lr,
                 "learning rate for a batch of 64, scaled with the batch (default: 0.01 for the "
                 "cnn, 0.05 for the mlp)")
      ->check(CLI::Range(1e-6, 10.0));
  app.add_option("--momentum", opts.momentum, "SGD momentum")->check(CLI::Range(0.0, 0.999));
  app.add_option("--warmup-steps", opts.warmup_steps, "steps of linear learning-rate warm-up")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--model", opts.model,
                 "cnn: two convolutions and a linear layer; mlp: fully connected layers")
      ->check(CLI::IsMember({"cnn", "mlp"}));
  app.add_option("--channels", opts.channels, "the cnn's channels after each convolution");
  app.add_option("--hidden", opts.hidden, "the mlp's hidden layer widths");
  app.add_option("--seed", opts.seed, "seed of the weights and the data order");
  app.add_option("--steps-per-epoch", opts.steps_per_epoch,
                 "train at most this many steps per epoch (0: the whole training set)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--log-every", opts.log_every, "rank 0 prints the loss every N steps (0: never)")
      ->check(CLI::Range(0, 1000000));
  app.add_option(
      "--checkpoint-dir", opts.checkpoint_dir,
      "where checkpoints go and are resumed from (default: $DTRAIN_RUN_DIR/checkpoints)");
  app.add_option("--checkpoint-every", opts.checkpoint_every,
                 "also checkpoint every N steps (0: at the end of each epoch only)")
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--no-checkpoint", opts.no_checkpoint, "neither save nor resume");
  try {
    app.parse(argc, argv);
    // A width given to the model that is not trained would be ignored without a word.
    if (opts.model == "cnn" && app.count("--hidden") > 0) {
      throw CLI::ValidationError("--hidden",
                                 "sets the widths of --model mlp; this run trains "
                                 "--model cnn, whose size --channels sets");
    }
    if (opts.model == "mlp" && app.count("--channels") > 0) {
      throw CLI::ValidationError("--channels",
                                 "sets the channels of --model cnn; this run trains "
                                 "--model mlp, whose size --hidden sets");
    }
    model_sizes(opts);
    if (opts.lr == 0.0f) opts.lr = default_lr(opts.model);
    return train(opts);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    return status == 0 ? 0 : 2;
  } catch (const fmnist::DataError& e) {
    std::fprintf(stderr, "dtrain-fashion-mnist: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtrain-fashion-mnist: %s\n", e.what());
    return 1;
  }
}
