#include "local_and_allocator.hpp"

#include "errors.hpp"

namespace dtrain::spank {

int local_and_allocator_init_post_opt(PluginState& state) {
  try {
    (void)resolve_settings(state.options, launch::current_environment(), state.config);
  } catch (const OptionError& e) {
    log_error(e.what());
    return -1;
  }
  return 0;
}

}  // namespace dtrain::spank
