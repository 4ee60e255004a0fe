// slurmstepd (remote context): once per step in user_init the settings, the topology and the
// step's CPUs; in each forked task process the step's GPU grant (task_init_privileged) and then
// the task's binding (task_init), exported with spank_setenv and applied to the task's CPUs before
// it execs the user's program.
#pragma once

#include "plugin_state.hpp"
#include "spank_api.hpp"

namespace dtrain::spank {

int remote_user_init(const Spank& sp, PluginState& state);
int remote_task_init_privileged(const Spank& sp, PluginState& state);
// Returns -1 (the task fails with the message on its stderr) when the task cannot be bound, unless
// the policy is best-effort: then the task runs unbound after a warning.
int remote_task_init(const Spank& sp, PluginState& state);

}  // namespace dtrain::spank
