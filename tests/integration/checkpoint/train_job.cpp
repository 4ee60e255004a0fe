// A tiny data-parallel training program with an integer-valued model, for the preemption tests:
// every step each rank draws its batch from a shuffled Shard, computes an integer "gradient", the
// ranks sum it (allreduce), and the model is updated in a way that depends on the order of the
// steps; so the final model equals an uninterrupted run's only if a resumed run continues at
// exactly the right step with exactly the right data.
//
//   train_job --steps N --dir CKPT_DIR --out FINAL_FILE [--sleep-ms M] [--save-every K]
//
// On SIGUSR1/SIGTERM (dtrain::Preemption) all ranks stop at the same step, save and exit with
// dtrain::kExitRequeue (85). Each rank appends what it does to CKPT_DIR/../events-rank-R.log:
//   start step=S restart=N   (S: the first step it runs; N: SLURM_RESTART_COUNT or 0)
//   step S                   (after each step)
//   stop step=S signal=G     (G: the signal this rank received itself, 0 if none)
//   done
// Rank 0 writes the final model to FINAL_FILE, one number per line.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dtrain/dtrain.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::uint64_t kSamples = 50;
constexpr std::uint64_t kBatch = 2;  // per rank
constexpr std::size_t kWidth = 8;

struct Args {
  std::int64_t steps = 0;
  std::string dir;
  std::string out;
  int sleep_ms = 0;
  std::int64_t save_every = 0;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--steps")
      a.steps = std::atoll(v);
    else if (k == "--dir")
      a.dir = v;
    else if (k == "--out")
      a.out = v;
    else if (k == "--sleep-ms")
      a.sleep_ms = std::atoi(v);
    else if (k == "--save-every")
      a.save_every = std::atoll(v);
    else
      throw std::runtime_error("train_job: unknown argument " + k);
  }
  if (a.steps <= 0 || a.dir.empty() || a.out.empty()) {
    throw std::runtime_error(
        "usage: train_job --steps N --dir DIR --out FILE [--sleep-ms M] [--save-every K]");
  }
  return a;
}

class Events {
 public:
  Events(const std::string& dir, int rank)
      : out_(std::filesystem::path(dir).parent_path() /
                 ("events-rank-" + std::to_string(rank) + ".log"),
             std::ios::app) {}
  void line(const std::string& s) { out_ << s << std::endl; }

 private:
  std::ofstream out_;
};

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = parse(argc, argv);
    dtrain::Context ctx = dtrain::init();
    const int rank = ctx.world().rank;
    dtrain::Preemption preemption(ctx);
    dtrain::Checkpointer ckpt(ctx, args.dir, {.keep = 2, .on_stage = {}});
    Events events(args.dir, rank);
    const dtrain::Shard shard(kSamples, ctx.world(),
                              {.shuffle = true, .seed = 2024, .tail = dtrain::ShardTail::kPad});
    const std::int64_t steps_per_epoch = static_cast<std::int64_t>(shard.size() / kBatch);

    std::vector<std::int64_t> model(kWidth, 1);
    std::int64_t start = 0;
    if (auto c = ckpt.load_latest()) {
      if (c->data.size() != model.size() * sizeof(std::int64_t)) {
        throw std::runtime_error("train_job: checkpoint of the wrong size");
      }
      std::memcpy(model.data(), c->data.data(), c->data.size());
      start = c->step + 1;
      // The rank's own blob says where its data stream was; it must be where the step puts it.
      const std::string blob(reinterpret_cast<const char*>(c->rank_data.data()),
                             c->rank_data.size());
      const std::string expected =
          "rank " + std::to_string(rank) + " next-step " + std::to_string(start);
      if (blob != expected)
        throw std::runtime_error("train_job: rank blob \"" + blob + "\", expected \"" + expected +
                                 "\"");
    }
    const char* restarts = std::getenv("SLURM_RESTART_COUNT");
    events.line("start step=" + std::to_string(start) + " restart=" + (restarts ? restarts : "0"));

    auto save = [&](std::int64_t step) {
      const std::string blob =
          "rank " + std::to_string(rank) + " next-step " + std::to_string(step + 1);
      ckpt.save(step, std::as_bytes(std::span(model)), std::as_bytes(std::span(blob)));
    };
    for (std::int64_t step = start; step < args.steps; ++step) {
      const auto epoch = static_cast<std::uint64_t>(step / steps_per_epoch);
      const auto consumed = static_cast<std::uint64_t>(step % steps_per_epoch) * kBatch;
      const auto batch = shard.indices(epoch, consumed);
      std::vector<std::int64_t> grad(kWidth, 0);
      for (std::uint64_t b = 0; b < kBatch; ++b) {
        for (std::size_t j = 0; j < kWidth; ++j) {
          grad[j] += static_cast<std::int64_t>((batch[b] + 1) * (j + 3)) + step;
        }
      }
      ctx.comm().allreduce(std::span<std::int64_t>(grad), dtrain::ReduceOp::kSum);
      for (std::size_t j = 0; j < kWidth; ++j) model[j] = (model[j] * 31 + grad[j]) % 1000000007;
      events.line("step " + std::to_string(step));
      if (args.sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(args.sleep_ms));

      if (preemption.should_stop()) {
        save(step);
        events.line("stop step=" + std::to_string(step) +
                    " signal=" + std::to_string(preemption.signal_received()));
        return dtrain::kExitRequeue;
      }
      if (args.save_every > 0 && (step + 1) % args.save_every == 0) save(step);
    }
    if (rank == 0) {
      std::ofstream out(args.out, std::ios::trunc);
      for (auto v : model) out << v << "\n";
    }
    events.line("done");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
