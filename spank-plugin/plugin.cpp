// The only file that defines slurm_spank_* entry points. For now the plugin registers itself so
// Slurm loads it from plugstack.conf; options and binding come with the SPANK plugin issue.
//
// Two C++ traps (research/slurm-on-localhost.md, section 2): spank.h declares the callbacks
// outside its own extern "C" block, so the include itself must be wrapped; and SPANK_PLUGIN()
// defines const globals, which have internal linkage in C++, so the symbols are spelled out here.
extern "C" {
#include <slurm/spank.h>
}

extern "C" {
extern const char plugin_name[] = "dtrain";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
extern const unsigned int spank_plugin_version = 1;
}

extern "C" int slurm_spank_init(spank_t /*sp*/, int /*ac*/, char** /*av*/) {
  // Nothing may be printed in allocator context: qsub parses sbatch's output for the job id.
  slurm_debug("dtrain: plugin loaded in context %d", static_cast<int>(spank_context()));
  return ESPANK_SUCCESS;
}
