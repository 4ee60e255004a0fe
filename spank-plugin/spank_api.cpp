#include "spank_api.hpp"

#include <string_view>
#include <vector>

#include "options.hpp"

// Two C++ traps: spank.h declares the callbacks
// outside its own extern "C" block, so the include itself must be wrapped; and SPANK_PLUGIN()
// defines const globals, which have internal linkage in C++, so the symbols are spelled out here.
extern "C" {
#include <slurm/slurm.h>
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

[[noreturn]] void fail(const char* call, spank_err_t rc) {
  throw SpankCallError(std::string("dtrain: spank: ") + call + ": " + spank_strerror(rc));
}

template <typename T>
T item(spank_t sp, spank_item_t which, const char* name) {
  T value{};
  const spank_err_t rc = spank_get_item(sp, which, &value);
  if (rc != ESPANK_SUCCESS) fail(name, rc);
  return value;
}

// SPANK keeps pointers into the option structs, so they live as long as the plugin.
std::vector<spank_option>& spank_option_table(OptionCallback callback) {
  static std::vector<spank_option> table = [callback] {
    std::vector<spank_option> t;
    for (const auto& spec : option_specs()) {
      t.push_back(
          spank_option{const_cast<char*>(spec.name.data()),
                       spec.arginfo.empty() ? nullptr : const_cast<char*>(spec.arginfo.data()),
                       const_cast<char*>(spec.usage.data()), static_cast<int>(spec.arg),
                       static_cast<int>(spec.id), callback});
    }
    return t;
  }();
  return table;
}

}  // namespace

int raw_context() { return static_cast<int>(spank_context()); }

std::string Spank::register_options(OptionCallback callback) const {
  for (auto& opt : spank_option_table(callback)) {
    if (spank_option_register(handle_, &opt) != ESPANK_SUCCESS) return opt.name;
  }
  return "";
}

Context current_context() {
  switch (spank_context()) {
    case S_CTX_LOCAL:
      return Context::kLocal;
    case S_CTX_REMOTE:
      return Context::kRemote;
    case S_CTX_ALLOCATOR:
      return Context::kAllocator;
    case S_CTX_SLURMD:
      return Context::kSlurmd;
    case S_CTX_JOB_SCRIPT:
      return Context::kJobScript;
    default:
      return Context::kOther;
  }
}

launch::Environment Spank::job_environment() const {
  char** env = nullptr;
  const spank_err_t rc = spank_get_item(handle_, S_JOB_ENV, &env);
  if (rc != ESPANK_SUCCESS) fail("spank_get_item(S_JOB_ENV)", rc);
  launch::Environment out;
  for (char** e = env; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    out.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return out;
}

void Spank::setenv(const std::string& name, const std::string& value) const {
  const spank_err_t rc = spank_setenv(handle_, name.c_str(), value.c_str(), 1);
  if (rc != ESPANK_SUCCESS) fail(("spank_setenv(" + name + ")").c_str(), rc);
}

std::uint32_t Spank::job_id() const { return item<uint32_t>(handle_, S_JOB_ID, "S_JOB_ID"); }
std::uint32_t Spank::step_id() const {
  return item<uint32_t>(handle_, S_JOB_STEPID, "S_JOB_STEPID");
}
std::uint32_t Spank::node_id() const {
  return item<uint32_t>(handle_, S_JOB_NODEID, "S_JOB_NODEID");
}
std::uint32_t Spank::local_task_count() const {
  return item<uint32_t>(handle_, S_JOB_LOCAL_TASK_COUNT, "S_JOB_LOCAL_TASK_COUNT");
}
std::uint32_t Spank::total_task_count() const {
  return item<uint32_t>(handle_, S_JOB_TOTAL_TASK_COUNT, "S_JOB_TOTAL_TASK_COUNT");
}
int Spank::task_id() const { return item<int>(handle_, S_TASK_ID, "S_TASK_ID"); }
std::uint32_t Spank::task_global_id() const {
  return item<uint32_t>(handle_, S_TASK_GLOBAL_ID, "S_TASK_GLOBAL_ID");
}

std::vector<std::string> Spank::job_argv() const {
  int argc = 0;
  char** argv = nullptr;
  std::vector<std::string> out;
  if (spank_get_item(handle_, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS) return out;
  for (int i = 0; i < argc && argv != nullptr && argv[i] != nullptr; ++i) out.emplace_back(argv[i]);
  return out;
}

bool Spank::is_job_step() const {
  const std::uint32_t step = step_id();
  return step != SLURM_BATCH_SCRIPT && step != SLURM_EXTERN_CONT && step != SLURM_INTERACTIVE_STEP;
}

void log_error(const std::string& message) { slurm_error("%s", message.c_str()); }
void log_debug(const std::string& message) { slurm_debug("%s", message.c_str()); }

}  // namespace dtrain::spank
