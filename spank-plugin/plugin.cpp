// The only file that defines slurm_spank_* entry points: each one is a guard (no exception ever
// reaches slurmstepd, srun or sbatch) around a call into the file of its context -- client.cpp
// for srun/sbatch/salloc, remote.cpp for slurmstepd -- in the manner of pyxis' pyxis_dispatch.c.
//
// Two C++ traps (research/slurm-on-localhost.md, section 2): spank.h declares the callbacks
// outside its own extern "C" block, so the include itself must be wrapped; and SPANK_PLUGIN()
// defines const globals, which have internal linkage in C++, so the symbols are spelled out here.
#include <exception>
#include <string>
#include <vector>

#include "client.hpp"
#include "config.hpp"
#include "errors.hpp"
#include "options.hpp"
#include "plugin_state.hpp"
#include "remote.hpp"
#include "spank_api.hpp"

extern "C" {
#include <slurm/spank.h>
}

extern "C" {
extern const char plugin_name[] = "dtrain";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
extern const unsigned int spank_plugin_version = 1;
}

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
    slurm_error("dtrain: %s: unexpected error", phase);
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

// SPANK keeps pointers into the option structs, so they live as long as the plugin.
std::vector<spank_option>& spank_option_table() {
  static std::vector<spank_option> table = [] {
    std::vector<spank_option> t;
    for (const auto& spec : option_specs()) {
      t.push_back(
          spank_option{const_cast<char*>(spec.name.data()),
                       spec.arginfo.empty() ? nullptr : const_cast<char*>(spec.arginfo.data()),
                       const_cast<char*>(spec.usage.data()), static_cast<int>(spec.arg),
                       static_cast<int>(spec.id), option_callback});
    }
    return t;
  }();
  return table;
}

}  // namespace
}  // namespace dtrain::spank

using namespace dtrain::spank;

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  return guarded("init", [&] {
    // Registered in srun, sbatch/salloc and slurmstepd alike: an exported spank_options table
    // would be ignored by sbatch, and #SBATCH --dtrain... would be an unrecognized option.
    const Context context = current_context();
    const bool has_options =
        context == Context::kLocal || context == Context::kRemote || context == Context::kAllocator;
    for (auto& opt : spank_option_table()) {
      if (has_options && spank_option_register(sp, &opt) != ESPANK_SUCCESS) {
        log_error(std::string("dtrain: cannot register option --") + opt.name);
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
    log_debug("dtrain: plugin loaded in context " +
              std::to_string(static_cast<int>(spank_context())));
    return 0;
  });
}

extern "C" int slurm_spank_init_post_opt(spank_t /*sp*/, int /*ac*/, char** /*av*/) {
  return guarded("init_post_opt", [&] {
    switch (current_context()) {
      case Context::kLocal:
      case Context::kAllocator:
        return client_init_post_opt(state());
      default:
        return 0;
    }
  });
}

extern "C" int slurm_spank_user_init(spank_t sp, int /*ac*/, char** /*av*/) {
  return guarded("user_init", [&] { return remote_user_init(Spank(sp), state()); });
}

extern "C" int slurm_spank_task_init_privileged(spank_t sp, int /*ac*/, char** /*av*/) {
  return guarded("task_init_privileged",
                 [&] { return remote_task_init_privileged(Spank(sp), state()); });
}

extern "C" int slurm_spank_task_init(spank_t sp, int /*ac*/, char** /*av*/) {
  return guarded("task_init", [&] { return remote_task_init(Spank(sp), state()); });
}
