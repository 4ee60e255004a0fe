// The only file that defines slurm_spank_* entry points: each one is a guard (no exception ever
// reaches slurmstepd, srun or sbatch) around a call into the file of its context --
// local_and_allocator.cpp for srun/sbatch/salloc, remote.cpp for slurmstepd -- in the manner of
// pyxis' pyxis_dispatch.c. Slurm's header stays in spank_api.cpp (docs/architecture.md rule 3):
// the entry points take `spank_handle*`, which is what spank.h's spank_t is.
#include <exception>
#include <string>
#include <vector>

#include "config.hpp"
#include "errors.hpp"
#include "local_and_allocator.hpp"
#include "options.hpp"
#include "plugin_state.hpp"
#include "remote.hpp"
#include "spank_api.hpp"

namespace dtrain::spank {
namespace {

PluginState& state() {
  static PluginState s;
  return s;
}

// Runs `body`, turning any exception into slurm_error() and -1: a plugin must never unwind into
// Slurm's C code.
template <typename Body>
int guarded(const char* phase, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    try {
      log_error(std::string(e.what()) + " (" + phase + ")");
    } catch (...) {
    }
  } catch (...) {
    try {
      log_error(std::string("dtrain: ") + phase + ": unexpected error");
    } catch (...) {
    }
  }
  return -1;
}

int option_callback(int val, const char* optarg, int /*remote*/) {
  return guarded("option", [&] {
    try {
      record_option(state().options, static_cast<OptionId>(val), optarg);
    } catch (const OptionError& e) {
      log_error(e.what());
      return -1;
    }
    return 0;
  });
}

}  // namespace
}  // namespace dtrain::spank

using namespace dtrain::spank;

extern "C" int slurm_spank_init(spank_handle* sp, int ac, char** av) {
  return guarded("init", [&] {
    // Registered in srun, sbatch/salloc and slurmstepd alike: an exported spank_options table
    // would be ignored by sbatch, and #SBATCH --dtrain... would be an unrecognized option.
    const Context context = current_context();
    const bool has_options =
        context == Context::kLocal || context == Context::kRemote || context == Context::kAllocator;
    if (has_options) {
      if (const std::string refused = Spank(sp).register_options(option_callback);
          !refused.empty()) {
        log_error("dtrain: cannot register option --" + refused);
        return -1;
      }
    }
    try {
      state().config = parse_config(std::vector<std::string>(av, av + ac));
    } catch (const ConfigError& e) {
      log_error(e.what());
      return -1;
    }
    // Nothing may be printed in allocator context: qsub parses sbatch's output for the job id.
    log_debug("dtrain: plugin loaded in context " + std::to_string(raw_context()));
    return 0;
  });
}

extern "C" int slurm_spank_init_post_opt(spank_handle* /*sp*/, int /*ac*/, char** /*av*/) {
  return guarded("init_post_opt", [&] {
    switch (current_context()) {
      case Context::kLocal:
      case Context::kAllocator:
        return local_and_allocator_init_post_opt(state());
      default:
        return 0;
    }
  });
}

extern "C" int slurm_spank_user_init(spank_handle* sp, int /*ac*/, char** /*av*/) {
  return guarded("user_init", [&] { return remote_user_init(Spank(sp), state()); });
}

extern "C" int slurm_spank_task_init_privileged(spank_handle* sp, int /*ac*/, char** /*av*/) {
  return guarded("task_init_privileged",
                 [&] { return remote_task_init_privileged(Spank(sp), state()); });
}

extern "C" int slurm_spank_task_init(spank_handle* sp, int /*ac*/, char** /*av*/) {
  return guarded("task_init", [&] { return remote_task_init(Spank(sp), state()); });
}
