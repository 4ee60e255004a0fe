#include "training_options.hpp"

#include "cnn.hpp"
#include "dataset.hpp"
#include "mlp.hpp"

#include <cstdlib>
#include <sstream>
#include <utility>
#include <vector>

namespace fmnist {
namespace {

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
std::vector<int> model_sizes(const TrainingOptions& o) {
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

}  // namespace

void add_training_options(CLI::App& app, TrainingOptions& opts) {
  app.add_option(
      "--data", opts.data,
      "directory with the four *-ubyte.gz files (default: " + std::string(kDebianDataDir) + ")");
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
}

void check_training_options(const CLI::App& app, TrainingOptions& opts) {
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
}

std::unique_ptr<Model> make_model(const TrainingOptions& o, std::size_t features) {
  const std::vector<int> sizes = model_sizes(o);
  if (o.model == "cnn") return std::make_unique<Cnn>(sizes[0], sizes[1]);
  std::vector<int> widths = {static_cast<int>(features)};
  widths.insert(widths.end(), sizes.begin(), sizes.end());
  widths.push_back(kClasses);
  return std::make_unique<Mlp>(std::move(widths));
}

}  // namespace fmnist
