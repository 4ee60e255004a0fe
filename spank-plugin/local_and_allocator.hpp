// srun (local context) and sbatch/salloc (allocator context): the plugin only checks what the
// user asked for, so a bad DTRAIN_* variable stops the command before anything is launched. Both
// contexts do the same; sbatch must in addition print nothing but errors (qsub parses its output).
#pragma once

#include "plugin_state.hpp"
#include "spank_api.hpp"

namespace dtrain::spank {

// Returns 0, or -1 after slurm_error() with the message.
int local_and_allocator_init_post_opt(PluginState& state);

}  // namespace dtrain::spank
