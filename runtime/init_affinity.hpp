// init()'s third adapter of the rank map, beside `dtrain bind` and the SPANK plugin: when neither
// applied the rank's entry (no DTRAIN_CPUSET in the environment), init() applies it to the running
// process, so a code started by a bare mpiexec that only calls init() gets the right GPU.
#pragma once

#include <string>

#include "dtrain/dtrain.hpp"
#include "settings.hpp"

namespace dtrain::runtime {

// Takes DTRAIN_AFFINITY, DTRAIN_CPUSET and DTRAIN_TOPOLOGY from `settings`, exports the rank's
// environment with setenv and binds every thread's CPUs when the topology is this machine and the
// launcher left them unbound. Returns what WorldInfo::affinity records: "init: gpus G cpus C ...",
// "launcher", "off", "off: single process without a launcher", or "skipped: CAUSE" after a one-line
// warning on stderr when this machine's topology cannot be used. Throws Error kInvalid for a
// DTRAIN_TOPOLOGY that cannot be read or solved, naming the variable and the file.
std::string apply_init_affinity(const WorldInfo& world, const Settings& settings);

}  // namespace dtrain::runtime
