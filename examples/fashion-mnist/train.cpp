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
// --fail-at-step S --fail-rank R makes rank R crash after step S in the job's first attempt only
// (WorldInfo::attempt, DTRAIN_ATTEMPT), to show a job with `restarts` resuming
// (docs/fault-tolerance.md).
#include "dataset.hpp"
#include "optimizer.hpp"
#include "train_state.hpp"
#include "training_options.hpp"

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
#include <string>
#include <vector>

namespace {

// The options of the data-parallel run: the shared ones (training_options.hpp), then its
// checkpoints and fault injection.
struct Options : fmnist::TrainingOptions {
  std::string checkpoint_dir;  // "": DTRAIN_RUN_DIR/checkpoints when set, else none
  std::int64_t checkpoint_every = 0;
  bool no_checkpoint = false;
  std::int64_t fail_at_step = 0;  // 0: never; else rank fail_rank crashes after this step
  int fail_rank = 0;
};

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

// Step 7, resuming: the position and parameters of the latest checkpoint, if any; a checkpoint
// of a run with another global batch or seed is refused (its data order would differ).
fmnist::TrainPosition resume(dtrain::Checkpointer& checkpointer, const Options& opts,
                             fmnist::Model& model, fmnist::Sgd& optimizer, bool root) {
  fmnist::TrainPosition pos;
  auto c = checkpointer.load_latest();
  if (!c) return pos;
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
  return pos;
}

// Everything one run trains with: the data, its shard, the model and the collectives. The steps
// of the header comment are marked where they happen.
class Training {
 public:
  Training(dtrain::Context& ctx, const Options& opts)
      : opts_(opts),
        world_(ctx.world()),
        comm_(ctx.comm()),
        meter_(ctx),
        preemption_(ctx),  // SIGUSR1 and SIGTERM, or DTRAIN_PREEMPT_SIGNALS
        root_(world_.rank == 0),
        data_dir_(fmnist::find_data_dir(opts.data)),
        train_set_(fmnist::load_split(data_dir_, "train")),
        test_set_(fmnist::load_split(data_dir_, "t10k")),
        local_batch_(opts.global_batch / world_.size),
        model_(fmnist::make_model(opts, train_set_.features)),
        optimizer_(model_->params().size(), opts.momentum),
        // Step 3: each rank's share of every epoch's permutation (DistributedSampler semantics).
        // The loop takes whole global batches only, so what lies past steps_per_epoch is unused.
        shard_(train_set_.count, world_,
               {.shuffle = true, .seed = opts.seed, .tail = dtrain::ShardTail::kDrop}),
        checkpoint_dir_(default_checkpoint_dir(opts)),
        reducer_(comm_, model_->grads()) {
    steps_per_epoch_ = static_cast<std::int64_t>(train_set_.count) / opts.global_batch;
    if (opts.steps_per_epoch > 0)
      steps_per_epoch_ = std::min(steps_per_epoch_, opts.steps_per_epoch);
    model_->init(opts.seed);
    comm_.broadcast(model_->params(), 0);  // step 6
    if (!checkpoint_dir_.empty()) {
      dtrain::CheckpointOptions options;
      options.keep = 2;
      checkpointer_.emplace(ctx, checkpoint_dir_, options);
      pos_ = resume(*checkpointer_, opts, *model_, optimizer_, root_);
    }
    pos_.global_batch = opts.global_batch;
    pos_.seed = opts.seed;
  }

  int run() {
    print_banner();
    for (; pos_.epoch < opts_.epochs;
         ++pos_.epoch, pos_.step_in_epoch = 0, pos_.epoch_loss_sum = 0.0) {
      const auto epoch_start = std::chrono::steady_clock::now();
      // Rank r's step k holds positions r, r + size, ... of global batch k of the epoch's order,
      // so the ranks together see exactly the samples one rank sees at step k: a 1-rank and a
      // 2-rank run with the same global batch compute the same averaged gradients, up to rounding.
      const std::vector<std::uint64_t> data_shard =
          shard_.indices(static_cast<std::uint64_t>(pos_.epoch));
      while (pos_.step_in_epoch < steps_per_epoch_) {
        if (!step(data_shard)) return stop_on_signal();
        if (checkpointer_ && opts_.checkpoint_every > 0 &&
            pos_.global_step % opts_.checkpoint_every == 0 &&
            pos_.step_in_epoch < steps_per_epoch_) {
          save(pos_);
        }
      }
      end_epoch(epoch_start);
    }
    meter_.flush();
    const double accuracy = test_accuracy(comm_, *model_, test_set_);
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
        "fashion-mnist: %d ranks, %zu training images (%lld steps/epoch of global batch %lld, "
        "%lld per rank), %zu test images, model %s, %d epoch%s, seed %llu\n",
        world_.size, train_set_.count, static_cast<long long>(steps_per_epoch_),
        static_cast<long long>(opts_.global_batch), static_cast<long long>(local_batch_),
        test_set_.count, model_->describe().c_str(), opts_.epochs, opts_.epochs == 1 ? "" : "s",
        static_cast<unsigned long long>(opts_.seed));
    std::fflush(stdout);
  }

  // One training step; false when a rank was asked to stop (steps 5 and 7).
  bool step(const std::vector<std::uint64_t>& data_shard) {
    const auto start = std::chrono::steady_clock::now();
    fmnist::gather_batch(train_set_,
                         std::span(data_shard)
                             .subspan(static_cast<std::size_t>(pos_.step_in_epoch * local_batch_),
                                      static_cast<std::size_t>(local_batch_)),
                         batch_images_, batch_labels_);
    const float local_loss = model_->loss_and_grads(batch_images_.data(), batch_labels_.data(),
                                                    static_cast<std::size_t>(local_batch_));
    const auto reduced = reducer_.run(local_loss, preemption_.requested());
    const float lr = fmnist::learning_rate(pos_.global_step, opts_.lr, opts_.global_batch,
                                           opts_.warmup_steps, steps_per_epoch_ * opts_.epochs);
    optimizer_.step(model_->params(), model_->grads(), lr);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    meter_.record(pos_.global_step, local_batch_, took.count());
    pos_.epoch_loss_sum += reduced.loss;
    ++pos_.step_in_epoch;
    ++pos_.global_step;
    if (root_ && opts_.log_every > 0 && pos_.global_step % opts_.log_every == 0) {
      std::printf("step %lld loss %.6f lr %.5f\n", static_cast<long long>(pos_.global_step),
                  static_cast<double>(reduced.loss), static_cast<double>(lr));
      std::fflush(stdout);
    }
    if (opts_.fail_at_step == pos_.global_step && world_.rank == opts_.fail_rank &&
        world_.attempt == 0) {
      // A crash as a bug or a lost GPU makes it: no clean shutdown, the other ranks are left in
      // their next collective and the launcher ends them.
      std::fprintf(stderr,
                   "dtrain-fashion-mnist: error: injected failure after step %lld on rank %d "
                   "(--fail-at-step, attempt %d)\n",
                   static_cast<long long>(pos_.global_step), world_.rank, world_.attempt);
      std::fflush(stderr);
      std::_Exit(3);
    }
    return !reduced.stop;
  }

  // Step 7, preemption: every rank saves the agreed position and exits with the requeue code.
  int stop_on_signal() {
    if (checkpointer_) save(pos_);
    if (root_) {
      std::printf("stopping at step %lld on a signal: %s\n",
                  static_cast<long long>(pos_.global_step),
                  checkpointer_ ? ("checkpoint saved in " + checkpoint_dir_).c_str()
                                : "no checkpoint directory, nothing saved");
    }
    meter_.flush();
    return dtrain::kExitRequeue;
  }

  void end_epoch(std::chrono::steady_clock::time_point epoch_start) {
    const double accuracy = test_accuracy(comm_, *model_, test_set_);  // step 8
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - epoch_start;
    if (root_) {
      std::printf("epoch %lld/%d: train loss %.4f, test accuracy %.2f %%, %.1f s\n",
                  static_cast<long long>(pos_.epoch + 1), opts_.epochs,
                  pos_.epoch_loss_sum / static_cast<double>(steps_per_epoch_), 100.0 * accuracy,
                  took.count());
      std::fflush(stdout);
    }
    if (checkpointer_) save({pos_.epoch + 1, 0, pos_.global_step, 0.0, 0, 0});
  }

  void save(fmnist::TrainPosition at) {
    at.global_batch = opts_.global_batch;
    at.seed = opts_.seed;
    const std::vector<std::uint8_t> bytes =
        fmnist::encode_state(at, model_->params(), optimizer_.velocity());
    checkpointer_->save(at.global_step, std::as_bytes(std::span(bytes)));
  }

  const Options& opts_;
  const dtrain::WorldInfo& world_;
  dtrain::Comm& comm_;
  dtrain::Meter meter_;
  dtrain::Preemption preemption_;
  const bool root_;
  const std::string data_dir_;
  const fmnist::Dataset train_set_;
  const fmnist::Dataset test_set_;
  const std::int64_t local_batch_;
  std::int64_t steps_per_epoch_ = 0;
  const std::unique_ptr<fmnist::Model> model_;
  fmnist::Sgd optimizer_;
  const dtrain::Shard shard_;
  const std::string checkpoint_dir_;
  std::optional<dtrain::Checkpointer> checkpointer_;
  fmnist::TrainPosition pos_;
  StepReducer reducer_;
  std::vector<float> batch_images_;
  std::vector<std::uint8_t> batch_labels_;
};

int train(const Options& opts) {
  dtrain::Context ctx = dtrain::init();
  if (opts.global_batch % ctx.world().size != 0) {
    throw CLI::ValidationError("--global-batch",
                               "expected a multiple of the " + std::to_string(ctx.world().size) +
                                   " ranks, got " + std::to_string(opts.global_batch));
  }
  return Training(ctx, opts).run();
}

}  // namespace

int main(int argc, char** argv) {
  Options opts;
  CLI::App app{"Fashion-MNIST trained data-parallel with libdtrain", "dtrain-fashion-mnist"};
  fmnist::add_training_options(app, opts);
  app.add_option(
      "--checkpoint-dir", opts.checkpoint_dir,
      "where checkpoints go and are resumed from (default: $DTRAIN_RUN_DIR/checkpoints)");
  app.add_option("--checkpoint-every", opts.checkpoint_every,
                 "also checkpoint every N steps (0: at the end of each epoch only)")
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--no-checkpoint", opts.no_checkpoint, "neither save nor resume");
  app.add_option("--fail-at-step", opts.fail_at_step,
                 "fault injection: crash after this step in the job's first attempt (0: never)")
      ->check(CLI::Range(0, 1000000000));
  app.add_option("--fail-rank", opts.fail_rank, "fault injection: the rank that crashes")
      ->check(CLI::Range(0, 1000000));
  try {
    app.parse(argc, argv);
    fmnist::check_training_options(app, opts);
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
